//! Chip presets: the hardware figures that decide local-memory layout (NPU count,
//! EU_BYTES, bytes per lane, banks), built in for real Sophgo chips and loadable from
//! TOML for user-defined ones.

use crate::error::{LmemError, Result};
use serde::{Deserialize, Serialize};

/// One chip's local-memory geometry. Plain public fields so callers can build one
/// directly; call [`Chip::validate`] on hand-built values before use. A chip file may
/// also hold the layer-group planner's timing figures: the planner's `NpuChip` reads
/// the whole file, this type only the geometry.
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

/// The text of the built-in preset `name` (case-insensitive): its geometry and the
/// planner's timing figures, with their sources in comments.
pub fn preset_toml(name: &str) -> Result<&'static str> {
    let lower = name.to_ascii_lowercase();
    PRESETS
        .iter()
        .find(|p| p.0 == lower)
        .map(|p| p.1)
        .ok_or_else(|| LmemError::UnknownPreset {
            given: name.to_string(),
            known: Chip::preset_names().collect::<Vec<_>>().join(", "),
        })
}

/// A TOML error as one line.
pub fn bad_file(e: toml::de::Error) -> LmemError {
    LmemError::BadChipFile(e.to_string().trim().replace('\n', " "))
}

impl Chip {
    /// Names of the built-in presets, in display order.
    pub fn preset_names() -> impl Iterator<Item = &'static str> {
        PRESETS.iter().map(|p| p.0)
    }

    /// All built-in presets' geometry, parsed and validated.
    pub fn presets() -> Vec<Chip> {
        PRESETS
            .iter()
            .filter_map(|(_, text)| Chip::geometry_of(text).ok())
            .collect()
    }

    /// The built-in preset `name`'s geometry (case-insensitive).
    pub fn preset(name: &str) -> Result<Chip> {
        Chip::geometry_of(preset_toml(name)?)
    }

    /// The geometry of a chip file that may also hold other figures (the presets hold
    /// the planner's timing): the geometry keys are read and checked, the rest left to
    /// whoever reads them.
    fn geometry_of(text: &str) -> Result<Chip> {
        #[derive(Deserialize)]
        struct Whole {
            #[serde(flatten)]
            chip: Chip,
            #[serde(flatten)]
            _others: toml::Table,
        }
        let whole: Whole = toml::from_str(text).map_err(bad_file)?;
        whole.chip.validate()?;
        Ok(whole.chip)
    }

    /// A chip with only its geometry (no 4N layout, no source); set the optional
    /// fields with struct update syntax, then [`Chip::validate`].
    pub fn new(name: &str, npu_num: u64, eu_bytes: u64, lane_bytes: u64, banks: u64) -> Chip {
        Chip {
            name: name.to_string(),
            npu_num,
            eu_bytes,
            lane_bytes,
            banks,
            align_4n: false,
            source: None,
        }
    }

    /// Parse one chip's geometry from TOML text (`name`, `npu_num`, `eu_bytes`,
    /// `lane_bytes`, `banks`, optional `align_4n` and `source`) and validate it. Any
    /// other key is an error; a file that also holds timing figures (as
    /// `data/lmem/*.toml` do) is read whole by the planner's `NpuChip`.
    pub fn from_toml(text: &str) -> Result<Chip> {
        let chip: Chip = toml::from_str(text).map_err(bad_file)?;
        chip.validate()?;
        Ok(chip)
    }

    /// The chip as TOML text (round-trips through [`Chip::from_toml`]).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Check every figure: at least one lane, EU_BYTES ≥ 1 and dividing the lane size,
    /// banks ≥ 1 dividing the lane size, 4N chips with EU_BYTES a multiple of 4.
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
        c.source = Some("a note".into());
        assert_eq!(Chip::from_toml(&c.to_toml()).unwrap(), c);
        let e = Chip::preset("bm9999").unwrap_err().to_string();
        assert!(e.contains("'bm9999'") && e.contains("bm1684x"), "{e}");
        let e = Chip::from_toml("name='x'\nnpu_num=0\neu_bytes=16\nlane_bytes=1024\nbanks=4")
            .unwrap_err();
        assert!(e.to_string().contains("npu_num = 0"), "{e}");
        let e = Chip::from_toml("name='x'\nnpu_num=2\neu_bytes=16\nlane_bytes=1000\nbanks=3")
            .unwrap_err();
        assert!(e.to_string().contains("lane_bytes = 1000"), "{e}");
        let base = "name='x'\nnpu_num=2\neu_bytes=16\nlane_bytes=1024\nbanks=4\n";
        // geometry only: an unknown key and a timing figure are both refused here
        for other in ["foo=1", "clock_hz=1e9"] {
            let e = Chip::from_toml(&format!("{base}{other}")).unwrap_err();
            assert!(e.to_string().contains(&other[..3]), "{e}");
        }
        // a preset file holds timing figures too: its geometry is read, they are left
        let p = Chip::preset("bm1684x").unwrap();
        assert!(preset_toml("BM1684X").unwrap().contains("clock_hz"));
        assert_eq!(Chip::from_toml(&p.to_toml()).unwrap(), p);
        // ... but a bad geometry figure in it is still refused
        let zero_banks = preset_toml("bm1688")
            .unwrap()
            .replace("banks = 16", "banks = 0");
        let e = Chip::geometry_of(&zero_banks).unwrap_err();
        assert!(e.to_string().contains("banks = 0"), "{e}");
    }
}
