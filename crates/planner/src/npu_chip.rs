//! An NPU chip as the planner reads it: one chip file (`data/lmem/*.toml`, or a user's
//! `--chip-file`) holds the local-memory geometry (`tpusim_lmem::Chip`), the timing
//! figures ([`ChipTiming`]) and TPU-MLIR's calibration figures
//! ([`ChipCalibration`]), all as flat keys.

use crate::error::Result;
use crate::timing::{ChipTiming, Timing};
use crate::tpumlir::ChipCalibration;
use serde::{Deserialize, Serialize};
use tpusim_lmem::chip::{bad_file, preset_toml};
use tpusim_lmem::{Chip, LmemError};

/// One NPU chip: geometry, timing and calibration, read from one flat TOML file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NpuChip {
    /// Local-memory geometry (lanes, EU_BYTES, lane size, banks).
    #[serde(flatten)]
    pub geometry: Chip,
    /// Timing figures (clock, DMA, MACs, …).
    #[serde(flatten)]
    pub timing: ChipTiming,
    /// How TPU-MLIR's own estimates relate to our cycles on this chip.
    #[serde(flatten)]
    pub tpu_mlir: ChipCalibration,
}

/// A chip file as read: the three parts and any key none of them knows (each part
/// flattened here, not through [`NpuChip`]: serde hands a flattened struct that itself
/// flattens every key, so the catch-all would see them all).
#[derive(Deserialize)]
struct ChipFile {
    #[serde(flatten)]
    geometry: Chip,
    #[serde(flatten)]
    timing: ChipTiming,
    #[serde(flatten)]
    tpu_mlir: ChipCalibration,
    #[serde(flatten)]
    unknown: toml::Table,
}

impl NpuChip {
    /// A chip with `geometry` and no timing or calibration figures (timed by the
    /// structural fallback of [`Timing::for_figures`]).
    pub fn untimed(geometry: Chip) -> NpuChip {
        NpuChip {
            geometry,
            timing: ChipTiming::default(),
            tpu_mlir: ChipCalibration::default(),
        }
    }

    /// Parse a chip file (the format of `data/lmem/*.toml`: the geometry keys of
    /// `tpusim_lmem::Chip`, the figures of [`ChipTiming`] and [`ChipCalibration`]) and
    /// validate it. A key none of them knows is an error naming it.
    pub fn from_toml(text: &str) -> tpusim_lmem::Result<NpuChip> {
        let file: ChipFile = toml::from_str(text).map_err(bad_file)?;
        if let Some(key) = file.unknown.keys().next() {
            return Err(LmemError::BadChipFile(format!(
                "unknown key `{key}`: a chip file holds the geometry (name, npu_num, \
                 eu_bytes, lane_bytes, banks, align_4n, source) and timing figures; \
                 `tpusim lmem show --toml` prints a whole one"
            )));
        }
        let chip = NpuChip {
            geometry: file.geometry,
            timing: file.timing,
            tpu_mlir: file.tpu_mlir,
        };
        chip.validate()?;
        Ok(chip)
    }

    /// The chip as TOML text (round-trips through [`NpuChip::from_toml`]).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// The built-in preset `name` (case-insensitive), whole.
    pub fn preset(name: &str) -> tpusim_lmem::Result<NpuChip> {
        NpuChip::from_toml(preset_toml(name)?)
    }

    /// All built-in presets, whole, in display order.
    pub fn presets() -> Vec<NpuChip> {
        Chip::preset_names()
            .filter_map(|name| NpuChip::preset(name).ok())
            .collect()
    }

    /// The chip's timing at `dtype`, per cycle ([`Timing::for_figures`]).
    pub fn timing_at(&self, dtype: tpusim_layout::ElementType) -> Result<Timing> {
        let mut t = Timing::for_figures(&self.geometry, &self.timing, dtype)?;
        t.avgpool_f32 = self.f32_ops_at(dtype).runs_in_f32_onnx("AveragePool");
        Ok(t)
    }

    /// The ops the chip's compiler computes in f32 in a plan of `dtype`: its
    /// `tpu_mlir_f32_ops` under F16 and BF16, none otherwise.
    pub fn f32_ops_at(&self, dtype: tpusim_layout::ElementType) -> crate::tpumlir::F32Ops {
        use tpusim_layout::ElementType as E;
        if !matches!(dtype, E::F16 | E::Bf16) {
            return crate::tpumlir::F32Ops::default();
        }
        // checked when the chip was read (`validate`)
        self.tpu_mlir
            .f32_ops(&self.geometry.name)
            .unwrap_or_default()
    }

    /// Check the geometry and every figure given.
    pub fn validate(&self) -> tpusim_lmem::Result<()> {
        self.geometry.validate()?;
        self.timing.validate(&self.geometry.name)?;
        self.tpu_mlir.validate(&self.geometry.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "name='x'\nnpu_num=2\neu_bytes=16\nlane_bytes=1024\nbanks=4\n";

    #[test]
    fn every_preset_reads_whole_and_round_trips() {
        let all = NpuChip::presets();
        assert_eq!(all.len(), Chip::preset_names().count());
        for c in all {
            assert_eq!(c.geometry, Chip::preset(&c.geometry.name).unwrap());
            assert_eq!(
                NpuChip::from_toml(&c.to_toml()).unwrap(),
                c,
                "{}",
                c.geometry.name
            );
        }
        let b = NpuChip::preset("BM1688").unwrap();
        assert_eq!(b.timing.clock_hz, Some(9.0e8));
        assert_eq!(b.timing.conv_position_group, Some(2.0));
        assert_eq!(b.tpu_mlir.tpu_mlir_dma_speedup, Some(1.6));
        assert_eq!(b.tpu_mlir.cycles_match_tpu_mlir, Some(true));
    }

    #[test]
    fn bad_figures_and_unknown_keys_are_named() {
        let err = |extra: &str| {
            NpuChip::from_toml(&format!("{BASE}{extra}"))
                .unwrap_err()
                .to_string()
        };
        assert!(err("foo=1").contains("`foo`"));
        assert!(err("clock_hz=-1.0").contains("clock_hz = -1"));
        assert!(err("global_exposed_fraction=1.5").contains("global_exposed_fraction = 1.5"));
        assert!(err("gdma_load_setup_cycles=-2").contains("gdma_load_setup_cycles = -2"));
        assert!(err("tpu_mlir_dma_speedup=0").contains("tpu_mlir_dma_speedup = 0"));
        assert!(
            err("npu_num=3").contains("npu_num"),
            "a duplicate key is refused"
        );
        assert!(NpuChip::from_toml(&BASE.replace("banks=4", "banks=3")).is_err());
        // integers are read as figures, and the former name of gdma_small_row_bytes still is
        let c = NpuChip::from_toml(&format!(
            "{BASE}clock_hz=1000000000\ngdma_small_coeff_row_bytes=4608"
        ))
        .unwrap();
        assert_eq!(
            (c.timing.clock_hz, c.timing.gdma_small_row_bytes),
            (Some(1e9), Some(4608.0))
        );
        assert_eq!(
            NpuChip::from_toml(BASE).unwrap(),
            NpuChip::untimed(Chip::new("x", 2, 16, 1024, 4))
        );
    }
}
