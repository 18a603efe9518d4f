//! Whether SCALE-Sim 3.0.0 can read a config at all: its reader asks configparser for
//! each key in a fixed order and crashes on the first one missing or malformed. Compat
//! mode must refuse such a config with SCALE-Sim's own reason rather than produce
//! numbers (our own model still runs it, filling defaults).
//!
//! The order and the conversions, as SCALE-Sim 3.0.0's `scale_config.read_conf_file`
//! performs them: `[general] run_name`; `[run_presets] InterfaceBandwidth`,
//! `UseRamulatorTrace`; `[architecture_presets]` ArrayHeight, ArrayWidth, the three SRAM
//! sizes and three offsets (each `int()`), Dataflow, Read/WriteRequestBuffer (`int()`);
//! `[layout]` IfmapCustomLayout and FilterCustomLayout (`getboolean`), then the six bank
//! figures (`int()`); in USER mode `[architecture_presets] Bandwidth` (a comma list of
//! `int()`); `[sparsity] SparsitySupport`, and when it is true SparseRep, OptimizedMapping,
//! BlockSize (only when optimized) and RandomNumberGeneratorSeed. The reasons are
//! Python's: `NoSectionError: No section: 'layout'`, `NoOptionError: No option
//! 'ifmapsrambanknum' in section: 'layout'` (configparser lower-cases option names),
//! `ValueError: invalid literal for int() with base 10: 'x'`, `ValueError: Not a
//! boolean: x`.
//!
//! configparser's section names are case-sensitive, its option names are not: a
//! `[Layout]` section is no `[layout]` (SCALE-Sim: `No section: 'layout'`), while
//! `IfmapOffset` and `ifmapoffset` are one option. Our own model reads section names in
//! any case.

use std::collections::{HashMap, HashSet};

/// A parsed config: values by (section, lower-case key), and the sections present.
pub struct Ini {
    /// Values.
    pub values: HashMap<(String, String), String>,
    /// Section names as written (configparser matches them case-sensitively).
    pub sections: HashSet<String>,
}

/// How SCALE-Sim reads one value.
#[derive(Clone, Copy)]
enum Read {
    /// `config.get`: any text.
    Text,
    /// `int(config.get(…))`.
    Int,
    /// `config.getboolean`.
    Bool,
    /// A comma-separated list of `int()`.
    IntList,
}

impl Ini {
    /// The value of `key` in `section` as SCALE-Sim reads it, or its error.
    fn read(&self, section: &str, key: &str, how: Read) -> Result<&str, String> {
        if !self.sections.contains(section) {
            return Err(format!(
                "configparser.NoSectionError: No section: '{section}'"
            ));
        }
        let k = key.to_ascii_lowercase();
        let Some(v) = self.values.get(&(section.to_string(), k.clone())) else {
            return Err(format!(
                "configparser.NoOptionError: No option '{k}' in section: '{section}'"
            ));
        };
        let bad_int =
            |x: &str| format!("ValueError: invalid literal for int() with base 10: '{x}'");
        match how {
            Read::Text => {}
            Read::Int if !python_int(v) => return Err(bad_int(v)),
            Read::IntList => {
                if let Some(x) = v.trim().split(',').map(str::trim).find(|x| !python_int(x)) {
                    return Err(bad_int(x));
                }
            }
            Read::Bool if python_bool(v).is_none() => {
                return Err(format!("ValueError: Not a boolean: {v}"))
            }
            _ => {}
        }
        Ok(v)
    }
}

/// Whether Python's `int()` takes `s`: optional sign, digits with single underscores
/// between them, surrounding whitespace.
pub(crate) fn python_int(s: &str) -> bool {
    let t = s.trim();
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    !t.is_empty()
        && !t.starts_with('_')
        && !t.ends_with('_')
        && !t.contains("__")
        && t.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// The value of a text Python's `int()` takes (see [`python_int`]), saturated to i128.
pub(crate) fn python_int_value(s: &str) -> i128 {
    let t: String = s.trim().chars().filter(|c| *c != '_').collect();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(&t)),
    };
    let v = digits.parse::<i128>().unwrap_or(i128::MAX);
    if neg {
        -v
    } else {
        v
    }
}

/// configparser's booleans.
fn python_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "yes" | "true" | "on" => Some(true),
        "0" | "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

/// Why SCALE-Sim 3.0.0 cannot read `ini`, or `None` if it can.
pub fn refusal(ini: &Ini) -> Option<String> {
    reads(ini).err()
}

fn reads(ini: &Ini) -> Result<(), String> {
    use Read::*;
    let ap = "architecture_presets";
    ini.read("general", "run_name", Text)?;
    let user = ini.read("run_presets", "InterfaceBandwidth", Text)? == "USER";
    ini.read("run_presets", "UseRamulatorTrace", Text)?;
    let array_and_srams = [
        "ArrayHeight",
        "ArrayWidth",
        "ifmapsramszkB",
        "filtersramszkB",
        "ofmapsramszkB",
        "IfmapOffset",
        "FilterOffset",
        "OfmapOffset",
    ];
    for k in array_and_srams {
        ini.read(ap, k, Int)?;
    }
    ini.read(ap, "Dataflow", Text)?;
    ini.read(ap, "ReadRequestBuffer", Int)?;
    ini.read(ap, "WriteRequestBuffer", Int)?;
    ini.read("layout", "IfmapCustomLayout", Bool)?;
    ini.read("layout", "FilterCustomLayout", Bool)?;
    for k in ["Ifmap", "Filter"] {
        for f in ["SRAMBankBandwidth", "SRAMBankNum", "SRAMBankPort"] {
            ini.read("layout", &format!("{k}{f}"), Int)?;
        }
    }
    if user {
        ini.read(ap, "Bandwidth", IntList)?;
    }
    let sparse = ini.read("sparsity", "SparsitySupport", Text)?;
    if sparse.eq_ignore_ascii_case("true") {
        ini.read("sparsity", "SparseRep", Text)?;
        let optimized = ini.read("sparsity", "OptimizedMapping", Text)?;
        if optimized.eq_ignore_ascii_case("true") {
            let block = ini.read("sparsity", "BlockSize", Int)?;
            let rows = ini.read(ap, "ArrayHeight", Int)?;
            if python_int_value(block) > python_int_value(rows) {
                return Err("AssertionError: ERROR: Invalid block size".into());
            }
        }
        ini.read("sparsity", "RandomNumberGeneratorSeed", Int)?;
    }
    Ok(())
}
