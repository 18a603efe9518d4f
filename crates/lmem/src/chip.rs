//! Chip presets: the hardware figures that decide local-memory layout (NPU count,
//! EU_BYTES, bytes per lane, banks), built in for real Sophgo chips and loadable from
//! TOML for user-defined ones.

use crate::error::{LmemError, Result};
use serde::{Deserialize, Serialize};

/// One chip's local-memory geometry, plus optional timing figures other crates (the
/// layer-group planner) may use. Plain public fields so callers can build one directly;
/// call [`Chip::validate`] on hand-built values before use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chip {
    /// Preset name (`bm1684x`, `cv183x`, …).
    pub name: String,
    /// NPU_NUM: number of lanes (NPUs); channel c lives on lane (start + c) mod npu_num.
    pub npu_num: u64,
    /// EU_BYTES: bytes one row of execution units covers; EU_NUM = eu_bytes / element
    /// bytes (an int4 element counts half a byte). Aligned layouts round channel regions
    /// and start addresses to this.
    pub eu_bytes: u64,
    /// Local memory per lane, bytes (LMEM_BYTES in TPU-MLIR).
    pub lane_bytes: u64,
    /// Banks per lane (LMEM_BANKS); each bank is `lane_bytes / banks` bytes.
    pub banks: u64,
    /// True for chips with the 4N layout (bm1684): 8-bit tensors pack 4 batches and
    /// 16-bit tensors 2 batches into one 4-byte word of local memory.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub align_4n: bool,
    /// Optional: TPU clock in Hz (for the planner's timing; `None` = unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<f64>,
    /// Optional: DMA rate between global memory and local memory, bytes per second
    /// (for the planner's load/store timing; `None` = unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_bytes_per_s: Option<f64>,
    /// Optional: DMA rate from local to global memory (stores), bytes per second
    /// (`None` = the same as `gdma_bytes_per_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_store_bytes_per_s: Option<f64>,
    /// Optional: least DMA cycles per (n, c) plane of a load: a load of P planes takes
    /// at least P × this many cycles, however few bytes it moves (`None` = no floor).
    /// Slices of a few rows are bound by this rather than by the byte rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_load_cycles_per_plane: Option<f64>,
    /// Optional: the same per-plane floor for stores, cycles (`None` = no floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_store_cycles_per_plane: Option<f64>,
    /// Optional: cycles every load pays on top of its transfer time (descriptor set-up
    /// and first-byte latency; `None` = 0). bm1688: 290, measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_load_setup_cycles: Option<f64>,
    /// Optional: the same for stores, cycles (`None` = 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_store_setup_cycles: Option<f64>,
    /// Optional: factor on the per-plane floor for small planes: coefficient chunks of
    /// under `eu_bytes` per output channel (bias, depthwise filters) and activation
    /// planes of under 8 bytes (`None` = 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdma_small_plane_factor: Option<f64>,
    /// Optional: small planes (bias vectors, depthwise filters, 1×1 activation maps such
    /// as a global pool's output) move in rows of at most this many bytes: a transfer of
    /// c such planes and B bytes counts as max(⌈c / ⌈B / row⌉⌉ · factor, c) planes, i.e.
    /// the small-plane factor shrinks with the row count but never below the plain
    /// per-plane floor (`None` = one row). bm1684x: 4,608, measured on TPU-MLIR's
    /// profiles: a 1,280-channel f32 bias loads in half the time of 1,280 small planes,
    /// 384 to 960-channel 3×3 depthwise filters in 192 to 240 small planes' time, a
    /// 1,280-channel f32 pool output stores in half the time of the f16 one, an
    /// 8×2,048-channel one at the plain floor. (Also read under its former name
    /// `gdma_small_coeff_row_bytes`.)
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "gdma_small_coeff_row_bytes"
    )]
    pub gdma_small_row_bytes: Option<f64>,
    /// Optional: the share of the smaller of a global layer's DMA and compute time that
    /// its internal pipeline leaves exposed (0 = fully overlapped; `None` = 0). A
    /// global layer runs alone from global memory, cut into a few slices whose loads,
    /// compute and stores overlap, but not during the first load and the last store.
    /// bm1684x 0.33 and bm1688 0.06: medians over the global convs of TPU-MLIR's
    /// profiles (46 and 11; their exposed share follows 1 / the CONV commands, 1 to 8
    /// on bm1684x, 16 to 64 on bm1688).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_exposed_fraction: Option<f64>,
    /// Optional: whether the planner's op and GDMA cycles for this chip match TPU-MLIR's
    /// own estimates closely enough to reproduce its time-step moves with them (`None`
    /// = false: the moves are then timed with a plainer model, fitted; see the
    /// planner's `pipelined` module). bm1684x: true, checked on its `cycle_slack` debug
    /// log (ResNet-50 batch 8: every op and transfer of its 30-op group within 6 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_match_tpu_mlir: Option<bool>,
    /// Optional: how much faster TPU-MLIR's own layer-group estimate of a transfer is
    /// than its codegen profile (which the GDMA figures above follow): the estimate is
    /// the set-up plus the rest of the profiled time divided by this (`None` = 1, the
    /// same). bm1688: 1.6, from its `cycle_slack` debug log of ResNet-18/50 and
    /// mini-MobileNetV2 (a 73,728-byte filter 3,054 cycles against 4,714 profiled, a
    /// 401,408-byte map 15,342 against 24,374, a 512-channel 7×7 store 2,051 against
    /// 3,182; 82 of 89 logged filter and map transfers within 0.2 %); bm1684x: 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpu_mlir_dma_speedup: Option<f64>,
    /// Optional: multiply-accumulates per cycle per lane at the chip's compute dtype
    /// (for the planner's compute timing; `None` = unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub macs_per_cycle_per_lane: Option<f64>,
    /// Optional: a dense conv computes each plane's output positions this many at a
    /// time, the last group whole (`None` = 1). bm1684x 4 and bm1688 2: TPU-MLIR
    /// 1.30.2's estimates of every dense conv on 7×7 maps are 52/49 and 50/49 of the
    /// plain count (ResNet-18/50, MobileNetV2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conv_position_group: Option<f64>,
    /// Optional: where the figures come from (free text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The built-in presets as embedded TOML files (`data/lmem/*.toml`), in display order.
const PRESETS: &[(&str, &str)] = &[
    ("bm1684x", include_str!("../../../data/lmem/bm1684x.toml")),
    ("bm1688", include_str!("../../../data/lmem/bm1688.toml")),
    ("bm1690", include_str!("../../../data/lmem/bm1690.toml")),
    ("cv183x", include_str!("../../../data/lmem/cv183x.toml")),
    ("cv182x", include_str!("../../../data/lmem/cv182x.toml")),
    ("cv181x", include_str!("../../../data/lmem/cv181x.toml")),
    ("cv180x", include_str!("../../../data/lmem/cv180x.toml")),
    ("bm1684", include_str!("../../../data/lmem/bm1684.toml")),
];

impl Chip {
    /// Names of the built-in presets, in display order.
    pub fn preset_names() -> impl Iterator<Item = &'static str> {
        PRESETS.iter().map(|p| p.0)
    }

    /// All built-in presets, parsed and validated.
    pub fn presets() -> Vec<Chip> {
        PRESETS
            .iter()
            .filter_map(|(_, text)| Chip::from_toml(text).ok())
            .collect()
    }

    /// The built-in preset `name` (case-insensitive).
    pub fn preset(name: &str) -> Result<Chip> {
        let lower = name.to_ascii_lowercase();
        match PRESETS.iter().find(|p| p.0 == lower) {
            Some((_, text)) => Chip::from_toml(text),
            None => Err(LmemError::UnknownPreset {
                given: name.to_string(),
                known: Chip::preset_names().collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// A chip with only its geometry (no 4N layout, no timing figures); set the optional
    /// fields with struct update syntax, then [`Chip::validate`].
    pub fn new(name: &str, npu_num: u64, eu_bytes: u64, lane_bytes: u64, banks: u64) -> Chip {
        Chip {
            name: name.to_string(),
            npu_num,
            eu_bytes,
            lane_bytes,
            banks,
            align_4n: false,
            clock_hz: None,
            gdma_bytes_per_s: None,
            gdma_store_bytes_per_s: None,
            gdma_load_cycles_per_plane: None,
            gdma_store_cycles_per_plane: None,
            gdma_load_setup_cycles: None,
            gdma_store_setup_cycles: None,
            gdma_small_plane_factor: None,
            gdma_small_row_bytes: None,
            global_exposed_fraction: None,
            cycles_match_tpu_mlir: None,
            tpu_mlir_dma_speedup: None,
            macs_per_cycle_per_lane: None,
            conv_position_group: None,
            source: None,
        }
    }

    /// Parse one chip from TOML text (the format of `data/lmem/*.toml`: `name`,
    /// `npu_num`, `eu_bytes`, `lane_bytes`, `banks`, optional `align_4n`, `clock_hz`,
    /// `gdma_bytes_per_s`, `gdma_store_bytes_per_s`, `gdma_load_cycles_per_plane`,
    /// `gdma_store_cycles_per_plane`, `gdma_load_setup_cycles`,
    /// `gdma_store_setup_cycles`, `gdma_small_plane_factor`, `gdma_small_row_bytes`,
    /// `global_exposed_fraction`, `cycles_match_tpu_mlir`, `tpu_mlir_dma_speedup`,
    /// `macs_per_cycle_per_lane`, `conv_position_group`,
    /// `source`) and validate it.
    pub fn from_toml(text: &str) -> Result<Chip> {
        let chip: Chip = toml::from_str(text)
            .map_err(|e| LmemError::BadChipFile(e.to_string().trim().replace('\n', " ")))?;
        chip.validate()?;
        Ok(chip)
    }

    /// The chip as TOML text (round-trips through [`Chip::from_toml`]).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Check every figure: at least one lane, EU_BYTES ≥ 1 and dividing the lane size,
    /// banks ≥ 1 dividing the lane size, optional rates finite and positive.
    pub fn validate(&self) -> Result<()> {
        let bad = |field, value, why| LmemError::BadChip {
            chip: self.name.clone(),
            field,
            value,
            why,
        };
        if self.npu_num == 0 {
            return Err(bad("npu_num", 0, "must be at least 1"));
        }
        if self.eu_bytes == 0 {
            return Err(bad("eu_bytes", 0, "must be at least 1"));
        }
        if self.lane_bytes == 0 {
            return Err(bad("lane_bytes", 0, "must be at least 1"));
        }
        if self.lane_bytes % self.eu_bytes != 0 {
            return Err(bad(
                "lane_bytes",
                self.lane_bytes,
                "must be a multiple of eu_bytes",
            ));
        }
        if self.banks == 0 {
            return Err(bad("banks", 0, "must be at least 1"));
        }
        if self.lane_bytes % self.banks != 0 {
            return Err(bad("banks", self.banks, "must divide lane_bytes"));
        }
        if self.npu_num.checked_mul(self.lane_bytes).is_none() {
            return Err(bad(
                "lane_bytes",
                self.lane_bytes,
                "npu_num * lane_bytes overflows 64 bits",
            ));
        }
        if self.align_4n && self.eu_bytes % 4 != 0 {
            return Err(bad(
                "eu_bytes",
                self.eu_bytes,
                "must be a multiple of 4 with align_4n",
            ));
        }
        for (field, v) in [
            ("clock_hz", self.clock_hz),
            ("gdma_bytes_per_s", self.gdma_bytes_per_s),
            ("gdma_store_bytes_per_s", self.gdma_store_bytes_per_s),
            (
                "gdma_load_cycles_per_plane",
                self.gdma_load_cycles_per_plane,
            ),
            (
                "gdma_store_cycles_per_plane",
                self.gdma_store_cycles_per_plane,
            ),
            ("gdma_small_plane_factor", self.gdma_small_plane_factor),
            ("gdma_small_row_bytes", self.gdma_small_row_bytes),
            ("tpu_mlir_dma_speedup", self.tpu_mlir_dma_speedup),
            ("macs_per_cycle_per_lane", self.macs_per_cycle_per_lane),
            ("conv_position_group", self.conv_position_group),
        ] {
            if let Some(x) = v {
                if !(x.is_finite() && x > 0.0) {
                    return Err(LmemError::BadChipFile(format!(
                        "chip '{}': {field} = {x} must be finite and positive",
                        self.name
                    )));
                }
            }
        }
        if let Some(x) = self.global_exposed_fraction {
            if !(0.0..=1.0).contains(&x) {
                return Err(LmemError::BadChipFile(format!(
                    "chip '{}': global_exposed_fraction = {x} must be between 0 and 1",
                    self.name
                )));
            }
        }
        for (field, v) in [
            ("gdma_load_setup_cycles", self.gdma_load_setup_cycles),
            ("gdma_store_setup_cycles", self.gdma_store_setup_cycles),
        ] {
            if let Some(x) = v {
                if !(x.is_finite() && x >= 0.0) {
                    return Err(LmemError::BadChipFile(format!(
                        "chip '{}': {field} = {x} must be finite and not negative",
                        self.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// Bytes of one bank of a lane (`lane_bytes / banks`).
    pub fn bank_bytes(&self) -> u64 {
        self.lane_bytes / self.banks.max(1)
    }

    /// Total local memory over all lanes, bytes (`npu_num · lane_bytes`).
    pub fn total_bytes(&self) -> u64 {
        self.npu_num.saturating_mul(self.lane_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_table() {
        let rows = [
            ("bm1684x", 64, 64, 256 << 10, 16),
            ("bm1688", 32, 16, 128 << 10, 16),
            ("bm1690", 64, 64, 256 << 10, 16),
            ("cv183x", 32, 16, 32 << 10, 8),
            ("cv182x", 8, 16, 32 << 10, 8),
            ("cv181x", 8, 16, 32 << 10, 8),
            ("cv180x", 2, 16, 32 << 10, 8),
            ("bm1684", 64, 128, 512 << 10, 8),
        ];
        for (name, npu, eu, lane, banks) in rows {
            let c = Chip::preset(name).unwrap();
            assert_eq!(
                (c.npu_num, c.eu_bytes, c.lane_bytes, c.banks),
                (npu, eu, lane, banks),
                "{name}"
            );
            assert_eq!(c.bank_bytes() * c.banks, c.lane_bytes);
        }
        assert_eq!(Chip::presets().len(), PRESETS.len());
        assert!(Chip::preset("bm1684").unwrap().align_4n);
        assert!(!Chip::preset("BM1684X").unwrap().align_4n);
    }

    #[test]
    fn toml_round_trip_and_errors() {
        let mut c = Chip::preset("cv183x").unwrap();
        c.clock_hz = Some(6.5e8);
        assert_eq!(Chip::from_toml(&c.to_toml()).unwrap(), c);
        let e = Chip::preset("bm9999").unwrap_err().to_string();
        assert!(e.contains("'bm9999'") && e.contains("bm1684x"), "{e}");
        let e = Chip::from_toml("name='x'\nnpu_num=0\neu_bytes=16\nlane_bytes=1024\nbanks=4")
            .unwrap_err();
        assert!(e.to_string().contains("npu_num = 0"), "{e}");
        let e = Chip::from_toml("name='x'\nnpu_num=2\neu_bytes=16\nlane_bytes=1000\nbanks=3")
            .unwrap_err();
        assert!(e.to_string().contains("lane_bytes = 1000"), "{e}");
        let e =
            Chip::from_toml("name='x'\nnpu_num=2\neu_bytes=16\nlane_bytes=1024\nbanks=4\nfoo=1")
                .unwrap_err();
        assert!(e.to_string().contains("foo"), "{e}");
        let e = Chip::from_toml(
            "name='x'\nnpu_num=2\neu_bytes=16\nlane_bytes=1024\nbanks=4\nclock_hz=-1.0",
        )
        .unwrap_err();
        assert!(e.to_string().contains("clock_hz"), "{e}");
        let base = "name='x'\nnpu_num=2\neu_bytes=16\nlane_bytes=1024\nbanks=4\n";
        let e = Chip::from_toml(&format!("{base}global_exposed_fraction=1.5")).unwrap_err();
        assert!(
            e.to_string().contains("global_exposed_fraction = 1.5"),
            "{e}"
        );
        // the former name of gdma_small_row_bytes is still read
        let c = Chip::from_toml(&format!("{base}gdma_small_coeff_row_bytes=4608")).unwrap();
        assert_eq!(c.gdma_small_row_bytes, Some(4608.0));
        let p = Chip::preset("bm1684x").unwrap();
        assert_eq!(Chip::from_toml(&p.to_toml()).unwrap(), p);
    }
}
