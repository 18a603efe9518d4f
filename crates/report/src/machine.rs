//! One machine model for both worlds: a TPU from the chip database (HBM, VMEM as one
//! on-chip memory, MXUs of R×C at a clock, VPU rate, the generation's tiled layouts) or
//! a Sophgo-style NPU from the lmem presets (GMEM, LMEM in lanes and banks, its compute
//! rate). Both expose what the timing model needs — off-chip bandwidth, peak rates, an
//! on-chip memory the planner can place blocks in — and the NPU view of the on-chip
//! memory ([`Machine::planner_chip`]) that the layer-group planner works on.
//!
//! The TPU as the planner sees it: VMEM split over the VPU's 128 lanes (channels go to
//! lanes, as a TPU puts the feature dimension on the 128 lanes of its (8,128) tiles),
//! each lane VMEM/128 bytes, one bank, blocks aligned to one sublane tile column
//! (8 sublanes × 4 bytes = 32 bytes per lane); clock, HBM bandwidth and the MXU MAC
//! rate per lane give the planner's cost model the TPU's figures. The report's own timing
//! ([`crate::timing`]) then re-times every group with the systolic model.

use crate::error::{ReportError, Result};
use tpusim_layout::{ElementType, TpuGen};

/// Lanes a TPU's VMEM is split into for the planner: the VPU's 128 lanes.
pub const TPU_LANES: u64 = 128;
/// Per-lane alignment of TPU blocks for the planner: one column of an (8,128) tile of
/// 32-bit words, 8 × 4 bytes.
pub const TPU_LANE_ALIGN: u64 = 32;

/// A TPU as the report models it.
#[derive(Debug, Clone)]
pub struct Tpu {
    /// The chip database entry.
    pub chip: tpusim_chip::Chip,
    /// Its generation, for the default tiled layouts.
    pub gen: TpuGen,
    /// Side of one MXU (R = C), PEs.
    pub mxu_dim: u64,
    /// MXUs on the chip (cores × MXUs per core).
    pub mxus: u64,
    /// The MXU clock the table's bf16 peak implies: peak / (2·R·C·MXUs), Hz. Using it
    /// keeps the systolic model and the table's peak consistent (v3's table peak
    /// implies 1.07 GHz where the paper quotes 940 MHz).
    pub clock_hz: f64,
    /// VMEM, bytes.
    pub vmem_bytes: u64,
}

/// A Sophgo-style NPU as the report models it.
#[derive(Debug, Clone)]
pub struct Npu {
    /// The chip file (lanes, EU_BYTES, lane size, banks; timing figures).
    pub chip: tpusim_planner::NpuChip,
}

/// Either machine.
#[derive(Debug, Clone)]
pub enum Machine {
    /// A TPU.
    Tpu(Box<Tpu>),
    /// A Sophgo-style NPU.
    Npu(Box<Npu>),
}

/// The default chip of `tpusim report`.
pub const DEFAULT_CHIP: &str = "v5e";

fn tpu_gen(name: &str) -> Option<TpuGen> {
    TpuGen::of_chip(name)
}

fn known() -> (String, String) {
    let tpus = tpusim_chip::builtin()
        .map(|v| {
            v.into_iter()
                .filter(|c| c.mxu_dim.is_some() && tpu_gen(&c.name).is_some())
                .map(|c| c.name)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let npus = tpusim_lmem::Chip::preset_names()
        .collect::<Vec<_>>()
        .join(", ");
    (tpus, npus)
}

impl Machine {
    /// Look a chip up by name: TPUs in the chip database first, then NPU presets.
    /// `vmem_bytes` overrides (or supplies) a TPU's VMEM size.
    pub fn lookup(name: &str, vmem_bytes: Option<u64>) -> Result<Machine> {
        if let Ok(chip) = tpusim_chip::lookup(name) {
            return Machine::from_tpu(chip, vmem_bytes);
        }
        if let Ok(chip) = tpusim_planner::NpuChip::preset(name) {
            return Ok(Machine::Npu(Box::new(Npu { chip })));
        }
        let (tpus, npus) = known();
        Err(ReportError::UnknownChip {
            given: name.to_string(),
            tpus,
            npus,
        })
    }

    /// The machine a chip file describes: a TPU in the chip database's TOML schema
    /// (`data/chips/*.toml`; its name or an alias must name a TPU generation the layout
    /// model knows), or an NPU in the local-memory preset schema (`data/lmem/*.toml`).
    /// `origin` names the file in errors.
    pub fn from_toml(text: &str, origin: &str, vmem_bytes: Option<u64>) -> Result<Machine> {
        let tpu = tpusim_chip::Chip::from_toml_str(text, origin);
        if let Ok(chip) = tpu {
            return Machine::from_tpu(chip, vmem_bytes);
        }
        let npu = tpusim_planner::NpuChip::from_toml(text);
        if let Ok(chip) = npu {
            return Ok(Machine::Npu(Box::new(Npu { chip })));
        }
        let (tpu_err, npu_err) = (
            tpu.err().map(|e| e.to_string()),
            npu.err().map(|e| e.to_string()),
        );
        Err(ReportError::Lower {
            context: format!("chip file {origin}"),
            message: format!(
                "neither a TPU chip ({}) nor an NPU preset ({})",
                tpu_err.unwrap_or_default(),
                npu_err.unwrap_or_default()
            ),
        })
    }

    /// A TPU from a chip-database entry. Errors for chips without an MXU size or a
    /// known TPU generation (GPUs) and for unknown VMEM.
    pub fn from_tpu(chip: tpusim_chip::Chip, vmem_bytes: Option<u64>) -> Result<Machine> {
        let missing = |field: &str| ReportError::MissingFigure {
            chip: chip.name.clone(),
            field: field.into(),
        };
        let gen = chip.aliases.iter().chain(std::iter::once(&chip.name)).find_map(|n| tpu_gen(n)).ok_or_else(|| {
            ReportError::Lower {
                context: format!("chip '{}'", chip.name),
                message: "neither its name nor an alias is a TPU generation the layout model knows (v2, v3, v4p, v5e, v5p, v6e, tpu7x); a chip file of your own needs one, e.g. aliases = [\"v5e\"] (GPUs are not modelled by `report`)".into(),
            }
        })?;
        let mxu_dim = u64::from(chip.mxu_dim.ok_or_else(|| missing("mxu_dim"))?);
        let mxus = u64::from(chip.mxus_per_core) * u64::from(chip.cores_per_chip);
        let per_cycle = chip
            .mxu_flops_per_cycle()
            .ok_or_else(|| missing("mxu_dim"))?;
        if mxus == 0
            || per_cycle <= 0.0
            || chip.bf16_flops_per_s <= 0.0
            || chip.hbm_bytes_per_s <= 0.0
        {
            return Err(missing("MXUs, bf16 FLOP/s or HBM bandwidth"));
        }
        let vmem_bytes = vmem_bytes
            .or(chip.vmem_bytes)
            .ok_or_else(|| missing("vmem_bytes (give it with --vmem BYTES)"))?;
        if vmem_bytes < TPU_LANES * TPU_LANE_ALIGN {
            return Err(ReportError::Lower {
                context: format!("chip '{}'", chip.name),
                message: format!(
                    "VMEM of {vmem_bytes} bytes is too small (at least {} bytes)",
                    TPU_LANES * TPU_LANE_ALIGN
                ),
            });
        }
        Ok(Machine::Tpu(Box::new(Tpu {
            clock_hz: chip.bf16_flops_per_s / per_cycle,
            gen,
            mxu_dim,
            mxus,
            vmem_bytes,
            chip,
        })))
    }

    /// Chip name.
    pub fn name(&self) -> &str {
        match self {
            Machine::Tpu(t) => &t.chip.name,
            Machine::Npu(n) => &n.chip.geometry.name,
        }
    }

    /// Off-chip memory capacity (HBM), bytes, where the description states it (TPUs;
    /// the NPU presets give no DRAM size).
    pub fn offchip_capacity_bytes(&self) -> Option<u64> {
        match self {
            Machine::Tpu(t) => Some(t.chip.hbm_bytes).filter(|&b| b > 0),
            Machine::Npu(_) => None,
        }
    }

    /// `"tpu"` or `"npu"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Machine::Tpu(_) => "tpu",
            Machine::Npu(_) => "npu",
        }
    }

    /// The element type used when none is asked for: bf16 on a TPU, f16 on an NPU.
    pub fn default_dtype(&self) -> ElementType {
        match self {
            Machine::Tpu(_) => ElementType::Bf16,
            Machine::Npu(_) => ElementType::F16,
        }
    }

    /// The on-chip memory as the layer-group planner sees it (an lmem chip with timing
    /// figures). For an NPU, its preset; for a TPU, VMEM over 128 lanes (module docs).
    pub fn planner_chip(&self) -> Result<tpusim_planner::NpuChip> {
        match self {
            Machine::Npu(n) => Ok(n.chip.clone()),
            Machine::Tpu(t) => {
                let lane = t.vmem_bytes / TPU_LANES / TPU_LANE_ALIGN * TPU_LANE_ALIGN;
                let macs = (t.mxu_dim * t.mxu_dim * t.mxus) as f64 / TPU_LANES as f64;
                let geometry = tpusim_lmem::Chip {
                    source: Some(format!(
                        "TPU {} adapter: VMEM {} B over {TPU_LANES} lanes, {} MXUs of {}x{} at {:.3e} Hz, HBM {:.3e} B/s",
                        t.chip.name, t.vmem_bytes, t.mxus, t.mxu_dim, t.mxu_dim, t.clock_hz, t.chip.hbm_bytes_per_s
                    )),
                    ..tpusim_lmem::Chip::new(&t.chip.name, TPU_LANES, TPU_LANE_ALIGN, lane, 1)
                };
                let chip = tpusim_planner::NpuChip {
                    timing: tpusim_planner::ChipTiming {
                        clock_hz: Some(t.clock_hz),
                        gdma_bytes_per_s: Some(t.chip.hbm_bytes_per_s),
                        macs_per_cycle_per_lane: Some(macs),
                        ..Default::default()
                    },
                    ..tpusim_planner::NpuChip::untimed(geometry)
                };
                chip.validate().map_err(|e| ReportError::Lower {
                    context: format!("TPU '{}' as planner chip", t.chip.name),
                    message: e.to_string(),
                })?;
                Ok(chip)
            }
        }
    }

    /// Peak rate of the matrix units at `dtype`, FLOP/s. TPU: the chip table's figure for
    /// the dtype's rate class. NPU: 2 × MACs per cycle per lane (the planner's timing at
    /// this dtype) × lanes × clock.
    pub fn peak_flops_per_s(&self, dtype: ElementType) -> Result<f64> {
        match self {
            Machine::Tpu(t) => Ok(t.chip.peak(rate_class(dtype)?).ops_per_s),
            Machine::Npu(n) => {
                let tm = npu_timing(&n.chip, dtype)?;
                Ok(2.0
                    * tm.used.macs_per_cycle_per_lane
                    * n.chip.geometry.npu_num as f64
                    * tm.used.clock_hz)
            }
        }
    }

    /// Vector-unit rate, FLOP/s (element-wise ops, pooling). TPU:
    /// `Chip::vector_flops_per_s` (the VPU figure, else sublanes × lanes × ALUs × cores
    /// at the MXU clock the table implies). NPU: EU_NUM results per cycle per lane × lanes × clock.
    pub fn vector_flops_per_s(&self, dtype: ElementType) -> Result<f64> {
        match self {
            Machine::Tpu(t) => t
                .chip
                .vector_flops_per_s()
                .ok_or_else(|| ReportError::Lower {
                    context: format!("chip '{}'", t.chip.name),
                    message: "no vector-unit rate (needs the VPU figures or the MXU's)".into(),
                }),
            Machine::Npu(n) => {
                let tm = npu_timing(&n.chip, dtype)?;
                Ok(tm.eltwise_per_cycle_per_lane
                    * n.chip.geometry.npu_num as f64
                    * tm.used.clock_hz)
            }
        }
    }

    /// Off-chip bandwidth (HBM, or the fastest GDMA rate to GMEM), bytes/s.
    pub fn offchip_bytes_per_s(&self, dtype: ElementType) -> Result<f64> {
        match self {
            Machine::Tpu(t) => Ok(t.chip.hbm_bytes_per_s),
            Machine::Npu(n) => {
                let tm = npu_timing(&n.chip, dtype)?;
                Ok(tm.used.peak_gdma_bytes_per_cycle() * tm.used.clock_hz)
            }
        }
    }

    /// On-chip memory, bytes (VMEM; all LMEM lanes together).
    pub fn onchip_bytes(&self) -> u64 {
        match self {
            Machine::Tpu(t) => t.vmem_bytes,
            Machine::Npu(n) => n.chip.geometry.total_bytes(),
        }
    }
}

/// The chip crate's rate class of an element type.
pub fn rate_class(dtype: ElementType) -> Result<tpusim_chip::RateClass> {
    tpusim_chip::RateClass::of(dtype).map_err(|e| ReportError::BadDtype {
        given: dtype.name().to_string(),
        why: e.to_string(),
    })
}

/// The planner's timing figures for an NPU at `dtype`.
pub fn npu_timing(
    chip: &tpusim_planner::NpuChip,
    dtype: ElementType,
) -> Result<tpusim_planner::Timing> {
    chip.timing_at(dtype).map_err(|e| ReportError::BadDtype {
        given: dtype.name().to_string(),
        why: e.to_string(),
    })
}

/// Parse a dtype name as the layout crate does (`bf16`, `f16`, `f32`, `s8`, …; also the
/// aliases `int8`, `fp16`, `fp32`, `float16`, `bfloat16`).
pub fn parse_dtype(text: &str) -> Result<ElementType> {
    let t = text.trim().to_ascii_lowercase();
    let canon = match t.as_str() {
        "int8" | "i8" => "s8",
        "uint8" => "u8",
        "fp16" | "float16" | "half" => "f16",
        "fp32" | "float32" | "float" => "f32",
        "bfloat16" => "bf16",
        "int16" | "i16" => "s16",
        "int32" | "i32" => "s32",
        other => other,
    };
    canon
        .parse::<ElementType>()
        .map_err(|_| ReportError::BadDtype {
            given: text.to_string(),
            why: "unknown element type (use bf16, f16, f32, int8/s8, u8)".into(),
        })
}
