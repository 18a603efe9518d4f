//! The built-in chip database: the TOML files of `data/chips/`, embedded in the binary.

use crate::chip::Chip;
use crate::error::{ChipError, Result};
use std::sync::OnceLock;

/// (file name, TOML text) of every built-in chip, in display order.
const BUILTIN: &[(&str, &str)] = &[
    ("v3.toml", include_str!("../../../data/chips/v3.toml")),
    ("v4p.toml", include_str!("../../../data/chips/v4p.toml")),
    ("v5p.toml", include_str!("../../../data/chips/v5p.toml")),
    ("v5e.toml", include_str!("../../../data/chips/v5e.toml")),
    ("v6e.toml", include_str!("../../../data/chips/v6e.toml")),
    ("h100.toml", include_str!("../../../data/chips/h100.toml")),
    ("b200.toml", include_str!("../../../data/chips/b200.toml")),
];

/// The parsed database, built once per process.
fn cached() -> &'static Result<Vec<Chip>> {
    static PARSED: OnceLock<Result<Vec<Chip>>> = OnceLock::new();
    PARSED.get_or_init(|| {
        BUILTIN
            .iter()
            .map(|(file, text)| Chip::from_toml_str(text, &format!("data/chips/{file}")))
            .collect()
    })
}

/// Every built-in chip, parsed and validated once per process (later calls clone the
/// cached list), in display order (TPUs oldest first, then GPUs). Errors only if an
/// embedded file is broken (a build defect).
pub fn builtin() -> Result<Vec<Chip>> {
    cached().clone()
}

/// The built-in TOML text of a chip (by name or alias), for users who want to copy
/// it as the start of their own `--chip-file`.
pub fn builtin_toml(name: &str) -> Result<&'static str> {
    let chip = lookup(name)?;
    BUILTIN
        .iter()
        .find(|(file, _)| file.strip_suffix(".toml") == Some(chip.name.as_str()))
        .map(|(_, text)| *text)
        .ok_or_else(|| unknown(name))
}

/// Find a built-in chip by name or alias, case-insensitive (`v5e`, `TPU-v5e`, `h100`).
pub fn lookup(name: &str) -> Result<Chip> {
    cached()
        .as_ref()
        .map_err(Clone::clone)?
        .iter()
        .find(|c| c.answers_to(name))
        .cloned()
        .ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> ChipError {
    let known = builtin()
        .map(|v| {
            v.iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    ChipError::UnknownChip {
        given: name.to_string(),
        known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_names_are_unique() {
        let chips = builtin().unwrap();
        assert_eq!(chips.len(), BUILTIN.len());
        for c in &chips {
            assert_eq!(lookup(&c.name).unwrap().name, c.name);
            for a in &c.aliases {
                assert_eq!(lookup(a).unwrap().name, c.name, "alias {a}");
            }
        }
        assert!(matches!(lookup("v9z"), Err(ChipError::UnknownChip { .. })));
        assert!(builtin_toml("trillium").unwrap().contains("mxu_dim = 256"));
    }
}
