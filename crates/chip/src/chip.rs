//! One chip's figures (the TOML schema of `data/chips/*.toml`), their validation and
//! the figures derived from them (VPU FLOP/s, VMEM bandwidth, peak per dtype).

use crate::dtype::RateClass;
use crate::error::{ChipError, Result};
use serde::{Deserialize, Serialize};

/// How a pod decides which axes of a slice have wraparound (torus) links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wraparound {
    /// An axis wraps iff its length equals the pod's length on that axis (v5e/v6e:
    /// an axis of 16 wraps, so `8x16` wraps on its long axis only).
    FullAxis,
    /// Every axis wraps iff the slice is made of whole cubes (`cube_shape`, 4x4x4 on
    /// v4p/v5p, joined by optical switches); smaller slices have no wraparound.
    FullCubes,
    /// A switched network (GPUs: NVLink/NVSwitch): no torus, slices are not modelled.
    Switched,
}

fn default_hop_latency() -> f64 {
    1e-6
}

/// Every figure of one chip, named exactly as in the TOML files (sizes in bytes,
/// bandwidths in bytes per second, rates in operations per second).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chip {
    /// Short lower-case name used on the command line (`v5e`).
    pub name: String,
    /// Human name (`TPU v5e`).
    pub display_name: String,
    /// Other names accepted on lookup (`tpu-v5e`, `v5litepod`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Maker (`google`, `nvidia`).
    pub vendor: String,
    /// HBM capacity per chip, bytes.
    pub hbm_bytes: u64,
    /// HBM ↔ VMEM (core) bandwidth per chip, bytes/s.
    pub hbm_bytes_per_s: f64,
    /// On-chip programmer-managed vector memory per chip, bytes (when known).
    #[serde(default)]
    pub vmem_bytes: Option<u64>,
    /// VMEM → MXU bandwidth as a multiple of HBM bandwidth (the book: about 22).
    #[serde(default)]
    pub vmem_bw_ratio: Option<f64>,
    /// TensorCores per chip (GPUs: streaming multiprocessors).
    pub cores_per_chip: u32,
    /// Matrix units per core (GPUs: tensor cores per SM).
    pub mxus_per_core: u32,
    /// Side of the square systolic array (128; 256 on v6e); absent for GPUs (no
    /// padding of matmul dimensions is modelled then).
    #[serde(default)]
    pub mxu_dim: Option<u32>,
    /// Core clock, Hz (when known).
    #[serde(default)]
    pub clock_hz: Option<f64>,
    /// Peak dense bf16 matmul rate per chip, FLOP/s.
    pub bf16_flops_per_s: f64,
    /// Peak full-precision f32 matmul rate per chip, FLOP/s (absent: bf16 / 6, the
    /// six bf16 passes XLA uses for f32 at HIGHEST precision).
    #[serde(default)]
    pub f32_flops_per_s: Option<f64>,
    /// Peak int8 matmul rate per chip, OP/s (absent: the bf16 rate).
    #[serde(default)]
    pub int8_ops_per_s: Option<f64>,
    /// Peak int4 matmul rate per chip, OP/s (absent: the int8 rate).
    #[serde(default)]
    pub int4_ops_per_s: Option<f64>,
    /// Peak fp8 matmul rate per chip, FLOP/s (absent: the bf16 rate).
    #[serde(default)]
    pub fp8_flops_per_s: Option<f64>,
    /// VPU sublanes (8 on TPUs).
    #[serde(default)]
    pub vpu_sublanes: Option<u32>,
    /// VPU lanes (128 on TPUs).
    #[serde(default)]
    pub vpu_lanes: Option<u32>,
    /// Independent FP ALUs per (lane, sublane) pair (4 on v5).
    #[serde(default)]
    pub vpu_alus_per_lane: Option<u32>,
    /// 32-bit vector registers (8×128 each) per core.
    #[serde(default)]
    pub vregs_per_core: Option<u32>,
    /// Explicit vector (non-matrix) FLOP/s per chip; when absent it is derived as
    /// sublanes × lanes × ALUs × cores × clock.
    #[serde(default)]
    pub vpu_flops_per_s: Option<f64>,
    /// Chip-to-chip link bandwidth, one direction, per link, bytes/s.
    pub ici_one_way_bytes_per_s: f64,
    /// The same link, both directions together, bytes/s (2 × one way).
    pub ici_bidi_bytes_per_s: f64,
    /// Chip-to-chip links per chip (4 for a 2-D torus, 6 for 3-D).
    pub ici_links_per_chip: u32,
    /// Host ↔ chip PCIe bandwidth per chip, one direction, bytes/s.
    pub pcie_bytes_per_s: f64,
    /// Data-centre network egress per chip, bytes/s.
    pub dcn_bytes_per_s: f64,
    /// Largest ICI-connected topology (chips per axis).
    pub pod_shape: Vec<u32>,
    /// Chips attached to one host (chips per axis).
    pub host_shape: Vec<u32>,
    /// Rule deciding which slice axes have wraparound links.
    pub wraparound: Wraparound,
    /// Unit of reconfiguration for [`Wraparound::FullCubes`] (4x4x4).
    #[serde(default)]
    pub cube_shape: Option<Vec<u32>>,
    /// Latency per ICI hop, seconds (the book: about 1 µs).
    #[serde(default = "default_hop_latency")]
    pub hop_latency_s: f64,
}

/// A peak rate for one dtype, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peak {
    /// Rate class asked for.
    pub class: RateClass,
    /// Peak rate per chip, operations/s.
    pub ops_per_s: f64,
    /// `"table"` when the chip file gives this rate, else how it was derived.
    pub origin: String,
}

/// Where a TOML error points, as ` (line L, column C)`; None when the span is the whole
/// document (a missing field), where a position would mean nothing.
fn text_position(text: &str, span: std::ops::Range<usize>) -> Option<String> {
    if span.start == 0 && span.end >= text.len() {
        return None;
    }
    let before = text.get(..span.start)?;
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some(format!(" (line {line}, column {column})"))
}

impl Chip {
    /// Parse and validate one chip description in the TOML schema; `origin` names
    /// the text's source in error messages.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Chip> {
        let chip: Chip = toml::from_str(text).map_err(|e| ChipError::BadChipFile {
            origin: origin.to_string(),
            // toml's messages span lines ("invalid string\nexpected ..."): one line.
            message: e.message().trim().replace('\n', "; ")
                + &e.span()
                    .filter(|_| !e.message().starts_with("missing field"))
                    .and_then(|s| text_position(text, s))
                    .unwrap_or_default(),
        })?;
        chip.validate()?;
        Ok(chip)
    }

    /// Check every figure: rates and sizes positive and finite, the two ICI figures
    /// consistent, shapes of matching rank, links matching a 2-D/3-D torus.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, problem: String| ChipError::BadFigure {
            chip: self.name.clone(),
            field: field.to_string(),
            problem,
        };
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        {
            return Err(bad(
                "name",
                "must be non-empty letters, digits, '-', '_' or '.'".into(),
            ));
        }
        let rates: [(&str, Option<f64>); 13] = [
            ("hbm_bytes_per_s", Some(self.hbm_bytes_per_s)),
            ("vmem_bw_ratio", self.vmem_bw_ratio),
            ("clock_hz", self.clock_hz),
            ("bf16_flops_per_s", Some(self.bf16_flops_per_s)),
            ("f32_flops_per_s", self.f32_flops_per_s),
            ("int8_ops_per_s", self.int8_ops_per_s),
            ("int4_ops_per_s", self.int4_ops_per_s),
            ("fp8_flops_per_s", self.fp8_flops_per_s),
            ("vpu_flops_per_s", self.vpu_flops_per_s),
            (
                "ici_one_way_bytes_per_s",
                Some(self.ici_one_way_bytes_per_s),
            ),
            ("ici_bidi_bytes_per_s", Some(self.ici_bidi_bytes_per_s)),
            ("pcie_bytes_per_s", Some(self.pcie_bytes_per_s)),
            ("dcn_bytes_per_s", Some(self.dcn_bytes_per_s)),
        ];
        for (field, v) in rates {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0) {
                    return Err(bad(field, format!("must be a finite number > 0, got {v}")));
                }
            }
        }
        if !(self.hop_latency_s.is_finite() && self.hop_latency_s >= 0.0) {
            return Err(bad(
                "hop_latency_s",
                format!("must be >= 0, got {}", self.hop_latency_s),
            ));
        }
        let counts: [(&str, Option<u32>); 8] = [
            ("cores_per_chip", Some(self.cores_per_chip)),
            ("mxus_per_core", Some(self.mxus_per_core)),
            ("mxu_dim", self.mxu_dim),
            ("vpu_sublanes", self.vpu_sublanes),
            ("vpu_lanes", self.vpu_lanes),
            ("vpu_alus_per_lane", self.vpu_alus_per_lane),
            ("vregs_per_core", self.vregs_per_core),
            ("ici_links_per_chip", Some(self.ici_links_per_chip)),
        ];
        for (field, v) in counts {
            if v == Some(0) {
                return Err(bad(field, "must be at least 1".into()));
            }
        }
        if self.hbm_bytes == 0 {
            return Err(bad("hbm_bytes", "must be at least 1".into()));
        }
        if self.vmem_bytes == Some(0) {
            return Err(bad("vmem_bytes", "must be at least 1".into()));
        }
        let ratio = self.ici_bidi_bytes_per_s / self.ici_one_way_bytes_per_s;
        if (ratio - 2.0).abs() > 0.02 {
            return Err(bad(
                "ici_bidi_bytes_per_s",
                format!(
                    "must be twice ici_one_way_bytes_per_s ({} vs {})",
                    self.ici_bidi_bytes_per_s, self.ici_one_way_bytes_per_s
                ),
            ));
        }
        let rank = self.pod_shape.len();
        if !(1..=3).contains(&rank) || self.pod_shape.contains(&0) {
            return Err(bad(
                "pod_shape",
                format!(
                    "must have 1 to 3 axes of at least 1, got {:?}",
                    self.pod_shape
                ),
            ));
        }
        if self.host_shape.len() != rank
            || self
                .host_shape
                .iter()
                .zip(&self.pod_shape)
                .any(|(h, p)| *h == 0 || h > p)
        {
            return Err(bad(
                "host_shape",
                format!(
                    "must have the pod's {rank} axes, each between 1 and the pod's, got {:?}",
                    self.host_shape
                ),
            ));
        }
        match self.wraparound {
            Wraparound::Switched => {}
            Wraparound::FullAxis | Wraparound::FullCubes => {
                if rank < 2 || self.ici_links_per_chip != 2 * rank as u32 {
                    return Err(bad(
                        "ici_links_per_chip",
                        format!(
                            "a {rank}-D torus needs {} links per chip and 2 or 3 axes, got {} links",
                            2 * rank,
                            self.ici_links_per_chip
                        ),
                    ));
                }
            }
        }
        if self.wraparound == Wraparound::FullCubes {
            match &self.cube_shape {
                Some(c) if c.len() == rank && !c.contains(&0) => {}
                _ => {
                    return Err(bad(
                        "cube_shape",
                        format!("wraparound = \"full_cubes\" needs a cube_shape of {rank} axes"),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Whether `name` (case-insensitive) is this chip's name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        let n = name.trim().to_ascii_lowercase();
        self.name.eq_ignore_ascii_case(&n)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(&n))
    }

    /// VMEM → MXU bandwidth per chip, bytes/s: `hbm_bytes_per_s × vmem_bw_ratio`.
    pub fn vmem_bytes_per_s(&self) -> Option<f64> {
        self.vmem_bw_ratio.map(|r| r * self.hbm_bytes_per_s)
    }

    /// Dense MXU FLOPs per clock cycle per chip: `2 × mxu_dim² × MXUs × cores`
    /// (one multiply-add per systolic cell per cycle). None without `mxu_dim`.
    pub fn mxu_flops_per_cycle(&self) -> Option<f64> {
        self.mxu_dim.map(|d| {
            2.0 * f64::from(d)
                * f64::from(d)
                * f64::from(self.mxus_per_core)
                * f64::from(self.cores_per_chip)
        })
    }

    /// Vector-unit peak per chip, FLOP/s: the explicit figure, else sublanes × lanes ×
    /// ALUs per lane × cores × clock (v5p: 8·128·4·2·1.75e9 = 1.4e13). None when a
    /// factor is unknown.
    pub fn vpu_flops_per_s(&self) -> Option<f64> {
        if let Some(v) = self.vpu_flops_per_s {
            return Some(v);
        }
        Some(
            f64::from(self.vpu_sublanes?)
                * f64::from(self.vpu_lanes?)
                * f64::from(self.vpu_alus_per_lane?)
                * f64::from(self.cores_per_chip)
                * self.clock_hz?,
        )
    }

    /// The clock the bf16 peak implies: peak / MXU FLOPs per cycle (`None` without
    /// `mxu_dim`). Keeps cycle models consistent with the table's peak.
    pub fn implied_clock_hz(&self) -> Option<f64> {
        Some(self.bf16_flops_per_s / self.mxu_flops_per_cycle()?)
    }

    /// Vector-unit FLOP/s for timing element-wise work: [`Chip::vpu_flops_per_s`],
    /// else sublanes × lanes × ALUs per lane (8, 128 and 1 when unknown) × cores at
    /// the clock the bf16 peak implies (peak / MXU FLOPs per cycle). `None` without
    /// MXU figures.
    pub fn vector_flops_per_s(&self) -> Option<f64> {
        self.vpu_flops_per_s().or_else(|| {
            let clock = self.implied_clock_hz()?;
            Some(
                f64::from(self.vpu_sublanes.unwrap_or(8))
                    * f64::from(self.vpu_lanes.unwrap_or(128))
                    * f64::from(self.vpu_alus_per_lane.unwrap_or(1))
                    * f64::from(self.cores_per_chip)
                    * clock,
            )
        })
    }

    /// Peak matmul rate per chip for a rate class, with its origin (table figure or
    /// the documented fallback: f32 → bf16/6, int8 → bf16, int4 → int8, fp8 → bf16).
    pub fn peak(&self, class: RateClass) -> Peak {
        let (ops, origin) = match class {
            RateClass::Bf16 => (self.bf16_flops_per_s, "table".to_string()),
            RateClass::F32 => match self.f32_flops_per_s {
                Some(v) => (v, "table".into()),
                None => (
                    self.bf16_flops_per_s / 6.0,
                    "bf16 rate / 6 (six bf16 passes, XLA HIGHEST precision)".into(),
                ),
            },
            RateClass::Int8 => match self.int8_ops_per_s {
                Some(v) => (v, "table".into()),
                None => (self.bf16_flops_per_s, "no int8 rate: bf16 rate".into()),
            },
            RateClass::Int4 => match (self.int4_ops_per_s, self.int8_ops_per_s) {
                (Some(v), _) => (v, "table".into()),
                (None, Some(v)) => (v, "no int4 rate: int8 rate".into()),
                (None, None) => (
                    self.bf16_flops_per_s,
                    "no int4 or int8 rate: bf16 rate".into(),
                ),
            },
            RateClass::Fp8 => match self.fp8_flops_per_s {
                Some(v) => (v, "table".into()),
                None => (self.bf16_flops_per_s, "no fp8 rate: bf16 rate".into()),
            },
        };
        Peak {
            class,
            ops_per_s: ops,
            origin,
        }
    }

    /// Chips in a full pod (product of `pod_shape`).
    pub fn pod_chips(&self) -> u64 {
        self.pod_shape.iter().map(|&d| u64::from(d)).product()
    }

    /// Chips attached to one host (product of `host_shape`).
    pub fn chips_per_host(&self) -> u64 {
        self.host_shape.iter().map(|&d| u64::from(d)).product()
    }

    /// Figures computed from the table, for display (`tpusim chip show`).
    pub fn derived(&self) -> Derived {
        Derived {
            vpu_flops_per_s: self.vpu_flops_per_s(),
            vmem_bytes_per_s: self.vmem_bytes_per_s(),
            mxu_flops_per_cycle: self.mxu_flops_per_cycle(),
            mxu_bf16_flops_per_s_from_clock: self
                .mxu_flops_per_cycle()
                .and_then(|f| self.clock_hz.map(|c| f * c)),
            peaks: RateClass::all().iter().map(|&c| self.peak(c)).collect(),
            critical_intensity_hbm: self.bf16_flops_per_s / self.hbm_bytes_per_s,
            critical_intensity_vmem: self.vmem_bytes_per_s().map(|b| self.bf16_flops_per_s / b),
            critical_intensity_pcie: self.bf16_flops_per_s / self.pcie_bytes_per_s,
            critical_batch_ici_bidi: self.bf16_flops_per_s / self.ici_bidi_bytes_per_s,
            pod_chips: self.pod_chips(),
            chips_per_host: self.chips_per_host(),
        }
    }
}

/// Figures derived from a chip's table (see [`Chip::derived`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Derived {
    /// Vector-unit FLOP/s per chip (None when clock or ALU count is unknown).
    pub vpu_flops_per_s: Option<f64>,
    /// VMEM → MXU bandwidth, bytes/s.
    pub vmem_bytes_per_s: Option<f64>,
    /// Dense MXU FLOPs per cycle per chip.
    pub mxu_flops_per_cycle: Option<f64>,
    /// MXU FLOPs per cycle × clock (compare with `bf16_flops_per_s`).
    pub mxu_bf16_flops_per_s_from_clock: Option<f64>,
    /// Peak per rate class with its origin.
    pub peaks: Vec<Peak>,
    /// bf16 FLOPs per HBM byte at which compute and HBM take equal time.
    pub critical_intensity_hbm: f64,
    /// The same against VMEM bandwidth.
    pub critical_intensity_vmem: Option<f64>,
    /// The same against PCIe (operands in host memory).
    pub critical_intensity_pcie: f64,
    /// bf16 FLOP/s over bidirectional ICI bandwidth: the per-chip batch above which
    /// data-parallel training on one axis is compute bound.
    pub critical_batch_ici_bidi: f64,
    /// Chips in a full pod.
    pub pod_chips: u64,
    /// Chips per host.
    pub chips_per_host: u64,
}
