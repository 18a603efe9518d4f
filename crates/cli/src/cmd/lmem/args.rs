//! Shared arguments of `tpusim lmem` verbs: which chip, which tensor, and how to turn
//! them into the library's `Chip` and `Placement`.

use crate::util::parse_bytes;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use tpusim_lmem::{Chip, ElementType, LocalLayout, Placement, TensorShape};
use tpusim_planner::NpuChip;

/// Which chip: a preset, a TOML file, and/or explicit figures that override either.
#[derive(Args, Debug, Clone)]
pub struct ChipArgs {
    /// Chip preset (see `tpusim lmem presets`): bm1684x, bm1688, bm1690, cv183x, cv182x,
    /// cv181x, cv180x, bm1684. Default bm1684x.
    #[arg(long, value_name = "PRESET", conflicts_with = "chip_file")]
    pub chip: Option<String>,
    /// Chip description in TOML (same fields as `tpusim lmem show PRESET --toml`):
    /// name, npu_num, eu_bytes, lane_bytes, banks [, align_4n, clock_hz, …].
    #[arg(long, value_name = "FILE")]
    pub chip_file: Option<PathBuf>,
    /// Override NPU_NUM, the number of lanes (e.g. 4 for the spec's example).
    #[arg(long, value_name = "N")]
    pub npu_num: Option<u64>,
    /// Override EU_BYTES, bytes per EU row (EU_NUM = EU_BYTES / element bytes), e.g. 64.
    #[arg(long, value_name = "B")]
    pub eu_bytes: Option<u64>,
    /// Override local memory per lane, bytes (`256KiB`, `262144`).
    #[arg(long, value_name = "BYTES")]
    pub lane_bytes: Option<String>,
    /// Override the number of banks per lane.
    #[arg(long, value_name = "N")]
    pub banks: Option<u64>,
}

impl ChipArgs {
    /// The chip these arguments describe (validated): its geometry and figures.
    pub fn resolve(&self) -> Result<NpuChip> {
        let mut npu = match (&self.chip, &self.chip_file) {
            (_, Some(path)) => {
                let text = crate::input::read_input(path, crate::input::InputKind::ChipToml)?;
                NpuChip::from_toml(&text)
                    .with_context(|| format!("in chip file '{}'", path.display()))?
            }
            (Some(name), None) => NpuChip::preset(name)?,
            (None, None) => NpuChip::preset("bm1684x")?,
        };
        let chip = &mut npu.geometry;
        let overridden = self.npu_num.is_some()
            || self.eu_bytes.is_some()
            || self.lane_bytes.is_some()
            || self.banks.is_some();
        if let Some(n) = self.npu_num {
            chip.npu_num = n;
        }
        if let Some(b) = self.eu_bytes {
            chip.eu_bytes = b;
        }
        if let Some(b) = &self.lane_bytes {
            chip.lane_bytes = parse_bytes(b).context("--lane-bytes")?;
        }
        if let Some(b) = self.banks {
            chip.banks = b;
        }
        if overridden {
            chip.name = format!("{} (modified)", chip.name);
            chip.validate()?;
        }
        Ok(npu)
    }

    /// The local-memory geometry these arguments describe (validated).
    pub fn geometry(&self) -> Result<Chip> {
        Ok(self.resolve()?.geometry)
    }
}

/// Which tensor and where it is placed.
#[derive(Args, Debug, Clone)]
pub struct TensorArgs {
    /// Shape N,C,H,W or N,C,D,H,W in elements (D folds into the channel region), e.g.
    /// `2,3,4,5` or `1x64x56x56`.
    #[arg(long, value_name = "N,C,H,W")]
    pub shape: String,
    /// Element type: f32, f16, bf16, s8, u8, s16, s32, s4, u4 … (XLA names) or aliases
    /// (int8, fp16, float32, int4, …). s4/u4 count half a byte.
    #[arg(long, value_name = "DTYPE", default_value = "f16")]
    pub dtype: String,
    /// Layout: aligned (C_stride = align_up(H·W, EU_NUM)), compact (C_stride = H·W),
    /// line (H_stride = align_up(W, EU_NUM)) or global (contiguous DDR).
    #[arg(long, value_name = "LAYOUT", default_value = "aligned")]
    pub layout: String,
    /// Lane (NPU) of channel 0; 0 ≤ K < NPU_NUM.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub start_npu: u64,
    /// The tensor's start address in each lane, bytes (aligned/line layouts need a
    /// multiple of EU_BYTES), e.g. `0`, `16KiB`.
    #[arg(long, value_name = "BYTES", default_value = "0")]
    pub addr: String,
}

impl TensorArgs {
    /// The placement these arguments describe (not yet checked against a chip).
    pub fn resolve(&self) -> Result<Placement> {
        let shape: TensorShape = self.shape.parse().context("--shape")?;
        let dtype: ElementType = self.dtype.parse().context("--dtype")?;
        let layout: LocalLayout = self.layout.parse().context("--layout")?;
        let start_addr = parse_bytes(&self.addr).context("--addr")?;
        Ok(Placement::at(
            shape,
            dtype,
            layout,
            self.start_npu,
            start_addr,
        ))
    }
}
