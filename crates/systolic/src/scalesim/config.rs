//! SCALE-Sim's `.cfg` file (Python configparser INI): the fields tpusim uses.

use super::readable::Ini;
use crate::error::{Result, SystolicError};
use crate::shape::{ArraySpec, Dataflow};
use std::collections::{HashMap, HashSet};

/// How SCALE-Sim sizes the DRAM interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandwidthMode {
    /// `InterfaceBandwidth: CALC`: bandwidth computed so the array never stalls.
    Calc,
    /// `InterfaceBandwidth: USER`: `Bandwidth` words/cycle; stalls when short.
    User,
}

/// The parts of a SCALE-Sim config tpusim reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleConfig {
    /// `[general] run_name`: the report folder's name.
    pub run_name: String,
    /// `ArrayHeight` × `ArrayWidth`.
    pub array: ArraySpec,
    /// `IfmapSramSzkB` (KiB).
    pub ifmap_kb: u64,
    /// `FilterSramSzkB` (KiB).
    pub filter_kb: u64,
    /// `OfmapSramSzkB` (KiB).
    pub ofmap_kb: u64,
    /// `Dataflow`.
    pub dataflow: Dataflow,
    /// `[run_presets] InterfaceBandwidth`.
    pub mode: BandwidthMode,
    /// `Bandwidth` (words/cycle, USER mode; first value is the OFMAP interface).
    pub bandwidths: Vec<u64>,
    /// `[layout] IfmapSRAMBankBandwidth` (USER mode: the IFMAP and FILTER interface
    /// words/cycle SCALE-Sim actually uses).
    pub ifmap_bank_bandwidth: u64,
    /// `[layout] FilterSRAMBankBandwidth`.
    pub filter_bank_bandwidth: u64,
    /// `IfmapOffset` and `FilterOffset`: where SCALE-Sim numbers the operands' words.
    pub offsets: Offsets,
    /// The rest of `[layout]`: custom layouts and their SRAM banks.
    pub layout: LayoutConfig,
    /// `[sparsity]`, when `SparsitySupport` is true.
    pub sparsity: Option<SparsityConfig>,
    /// Options set in the config that change SCALE-Sim's numbers but that tpusim does
    /// not model (Ramulator DRAM traces), as `Key: value` texts; `--scalesim-compat`
    /// refuses a config listing any.
    pub unmodelled: Vec<String>,
}

/// The first address of the IFMAP and FILTER operands (`IfmapOffset`, `FilterOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offsets {
    /// `IfmapOffset` (SCALE-Sim's default 0).
    pub ifmap: i64,
    /// `FilterOffset` (SCALE-Sim's default 10,000,000).
    pub filter: i64,
}

/// `[layout]`: whether the IFMAP / FILTER SRAM holds a custom layout (read from the
/// layout file) and how each SRAM is banked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutConfig {
    /// `IfmapCustomLayout`.
    pub ifmap_custom: bool,
    /// `FilterCustomLayout`.
    pub filter_custom: bool,
    /// `IfmapSRAMBankNum`.
    pub ifmap_banks: u64,
    /// `IfmapSRAMBankPort`: ports per IFMAP bank.
    pub ifmap_ports: u64,
    /// `FilterSRAMBankNum`.
    pub filter_banks: u64,
    /// `FilterSRAMBankPort`.
    pub filter_ports: u64,
}

/// `[sparsity]` with `SparsitySupport: true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparsityConfig {
    /// `SparseRep` as written (`csr`, `csc`, `ellpack_block`; SCALE-Sim reports zero
    /// storage for any other).
    pub representation: String,
    /// `OptimizedMapping`: row-wise N:`BlockSize` sparsity with a random N per filter.
    pub optimized_mapping: bool,
    /// `BlockSize` (read only with `OptimizedMapping`; SCALE-Sim's default 4).
    pub block_size: u64,
    /// `RandomNumberGeneratorSeed`: numpy's legacy seed, set before each layer.
    pub seed: i64,
}

fn err(file: &str, msg: String) -> SystolicError {
    SystolicError::Config {
        file: file.to_string(),
        msg,
    }
}

/// Parse configparser-style text: `[section]`, `key = value` or `key: value`, `#`/`;`
/// comment lines; section and key names are matched case-insensitively (the section
/// names are kept as written too, for SCALE-Sim's case-sensitive check in `readable`).
fn parse_ini(text: &str, file: &str) -> Result<Ini> {
    let mut out = HashMap::new();
    let mut sections = HashSet::new();
    let mut section = String::new();
    for (no, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .ok_or_else(|| err(file, format!("line {}: unclosed section '{line}'", no + 1)))?;
            section = name.trim().to_ascii_lowercase();
            sections.insert(name.trim().to_string());
            continue;
        }
        let pos = line.find(['=', ':']).ok_or_else(|| {
            err(
                file,
                format!("line {}: expected 'key = value', got '{line}'", no + 1),
            )
        })?;
        let (k, v) = line.split_at(pos);
        out.insert(
            (section.clone(), k.trim().to_ascii_lowercase()),
            v[1..].trim().to_string(),
        );
    }
    Ok(Ini {
        values: out,
        sections,
    })
}

impl ScaleConfig {
    /// The config SCALE-Sim's own `scale.cfg` files spell out for an array of `rows ×
    /// cols`, a dataflow (`ws`, `os`, `is`), SRAMs of `sram_kb` KiB (IFMAP, FILTER,
    /// OFMAP), and either CALC bandwidth (`None`) or USER mode with `Bandwidth` words/cycle
    /// (the OFMAP interface), the IFMAP and FILTER interfaces at `bank_bandwidth`
    /// (`[layout] …SRAMBankBandwidth`, 10 in SCALE-Sim's sample configs, spread over 10
    /// banks, or over 1 where 10 does not divide it, since SCALE-Sim's USER mode asserts
    /// an even split); written as text and parsed, so it is checked as a config file is.
    pub fn of_parts(
        rows: u64,
        cols: u64,
        dataflow: &str,
        sram_kb: [u64; 3],
        bandwidth: Option<u64>,
        bank_bandwidth: u64,
    ) -> Result<Self> {
        let (mode, bw) = match bandwidth {
            Some(b) => ("USER", b),
            None => ("CALC", 10),
        };
        let bank = bank_bandwidth;
        // SCALE-Sim's sample configs spread each SRAM over 10 banks; USER mode needs the
        // bank bandwidth to divide among them (it asserts so), so other bandwidths get 1
        let banks = if bank % 10 == 0 { 10 } else { 1 };
        let [ifmap, filter, ofmap] = sram_kb;
        let text = format!(
            "[general]\nrun_name = sweep\n\n[architecture_presets]\nArrayHeight: {rows}\n\
             ArrayWidth: {cols}\nIfmapSramSzkB: {ifmap}\nFilterSramSzkB: {filter}\n\
             OfmapSramSzkB: {ofmap}\nIfmapOffset: 0\nFilterOffset: 10000000\n\
             OfmapOffset: 20000000\nBandwidth: {bw}\nDataflow: {dataflow}\n\
             ReadRequestBuffer: 32\nWriteRequestBuffer: 32\n\n[layout]\n\
             IfmapCustomLayout: False\nIfmapSRAMBankBandwidth: {bank}\nIfmapSRAMBankNum: {banks}\n\
             IfmapSRAMBankPort: 2\nFilterCustomLayout: False\nFilterSRAMBankBandwidth: {bank}\n\
             FilterSRAMBankNum: {banks}\nFilterSRAMBankPort: 2\n\n[sparsity]\n\
             SparsitySupport: false\nSparseRep: ellpack_block\nOptimizedMapping: false\n\
             BlockSize: 8\nRandomNumberGeneratorSeed: 40\n\n[run_presets]\n\
             InterfaceBandwidth: {mode}\nUseRamulatorTrace: False\n"
        );
        Self::parse(&text, "sweep configuration")
    }

    /// Parse a config's text for `--scalesim-compat`: refused, with SCALE-Sim 3.0.0's
    /// own reason, when SCALE-Sim could not read it (see `readable`), before anything
    /// our own parser would default or refuse in its own words.
    pub fn parse_compat(text: &str, file: &str) -> Result<Self> {
        if let Some(why) = super::readable::refusal(&parse_ini(text, file)?) {
            return Err(err(
                file,
                format!("SCALE-Sim 3.0.0 cannot read this config ({why}); --scalesim-compat reproduces only what it runs"),
            ));
        }
        Self::parse(text, file)
    }

    /// Parse a config's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        let ini = parse_ini(text, file)?.values;
        let get = |s: &str, k: &str| -> Result<&String> {
            ini.get(&(s.to_string(), k.to_ascii_lowercase()))
                .ok_or_else(|| err(file, format!("missing [{s}] {k}")))
        };
        let num = |s: &str, k: &str| -> Result<u64> {
            let v = get(s, k)?;
            v.parse::<u64>()
                .map_err(|_| err(file, format!("[{s}] {k} = '{v}' is not a whole number")))
        };
        let opt_int = |s: &str, k: &str, d: i64| -> Result<i64> {
            match ini.get(&(s.to_string(), k.to_ascii_lowercase())) {
                None => Ok(d),
                Some(v) => v
                    .parse::<i64>()
                    .map_err(|_| err(file, format!("[{s}] {k} = '{v}' is not an integer"))),
            }
        };
        let opt_num = |s: &str, k: &str, d: u64| -> Result<u64> {
            match ini.get(&(s.to_string(), k.to_ascii_lowercase())) {
                None => Ok(d),
                Some(v) => v
                    .parse::<u64>()
                    .map_err(|_| err(file, format!("[{s}] {k} = '{v}' is not a whole number"))),
            }
        };
        let ap = "architecture_presets";
        let array = ArraySpec::new(num(ap, "ArrayHeight")?, num(ap, "ArrayWidth")?)
            .map_err(|e| err(file, e.to_string()))?;
        let dataflow =
            Dataflow::parse(get(ap, "Dataflow")?).map_err(|e| err(file, e.to_string()))?;
        let mode = match get("run_presets", "InterfaceBandwidth")?.as_str() {
            "CALC" => BandwidthMode::Calc,
            "USER" => BandwidthMode::User,
            other => {
                return Err(err(
                    file,
                    format!("[run_presets] InterfaceBandwidth = '{other}' (use CALC or USER)"),
                ))
            }
        };
        let mut bandwidths = Vec::new();
        if let Some(b) = ini.get(&(ap.to_string(), "bandwidth".to_string())) {
            for part in b.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                bandwidths.push(part.parse::<u64>().map_err(|_| {
                    err(
                        file,
                        format!("[{ap}] Bandwidth '{b}': '{part}' is not a whole number"),
                    )
                })?);
            }
        }
        if mode == BandwidthMode::User && bandwidths.first().map_or(true, |b| *b == 0) {
            return Err(err(
                file,
                "USER bandwidth mode needs a positive [architecture_presets] Bandwidth".into(),
            ));
        }
        let run_name = get("general", "run_name")?.clone();
        if run_name.is_empty()
            || run_name.contains(['/', '\\'])
            || run_name == "."
            || run_name == ".."
        {
            return Err(err(
                file,
                format!("[general] run_name '{run_name}' must be a plain folder name"),
            ));
        }
        let cfg = ScaleConfig {
            run_name,
            array,
            ifmap_kb: num(ap, "IfmapSramSzkB")?,
            filter_kb: num(ap, "FilterSramSzkB")?,
            ofmap_kb: num(ap, "OfmapSramSzkB")?,
            dataflow,
            mode,
            bandwidths,
            ifmap_bank_bandwidth: opt_num("layout", "IfmapSRAMBankBandwidth", 10)?,
            filter_bank_bandwidth: opt_num("layout", "FilterSRAMBankBandwidth", 10)?,
            offsets: Offsets {
                ifmap: opt_int(ap, "IfmapOffset", 0)?,
                filter: opt_int(ap, "FilterOffset", 10_000_000)?,
            },
            layout: LayoutConfig {
                ifmap_custom: false,
                filter_custom: false,
                ifmap_banks: opt_num("layout", "IfmapSRAMBankNum", 10)?,
                ifmap_ports: opt_num("layout", "IfmapSRAMBankPort", 2)?,
                filter_banks: opt_num("layout", "FilterSRAMBankNum", 10)?,
                filter_ports: opt_num("layout", "FilterSRAMBankPort", 2)?,
            },
            sparsity: None,
            unmodelled: Vec::new(),
        };
        let mut cfg = cfg;
        // read as SCALE-Sim reads them: configparser's getboolean for the layouts,
        // `== 'True'` for Ramulator, `.lower() == 'true'` for sparsity
        let val = |s: &str, k: &str| ini.get(&(s.to_string(), k.to_ascii_lowercase()));
        let getboolean = |k: &str| {
            val("layout", k).is_some_and(|v| {
                ["1", "yes", "true", "on"].contains(&v.to_ascii_lowercase().as_str())
            })
        };
        cfg.layout.ifmap_custom = getboolean("IfmapCustomLayout");
        cfg.layout.filter_custom = getboolean("FilterCustomLayout");
        if let Some(v) = val("run_presets", "UseRamulatorTrace") {
            if v == "True" {
                cfg.unmodelled.push(format!("UseRamulatorTrace: {v}"));
            }
        }
        let is_true = |s: &str, k: &str| val(s, k).is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if is_true("sparsity", "SparsitySupport") {
            let optimized_mapping = is_true("sparsity", "OptimizedMapping");
            cfg.sparsity = Some(SparsityConfig {
                representation: val("sparsity", "SparseRep").cloned().unwrap_or_default(),
                optimized_mapping,
                block_size: if optimized_mapping {
                    opt_num("sparsity", "BlockSize", 4)?
                } else {
                    4
                },
                seed: opt_int("sparsity", "RandomNumberGeneratorSeed", 40)?,
            });
        }
        for (v, k) in [
            (cfg.ifmap_kb, "IfmapSramSzkB"),
            (cfg.filter_kb, "FilterSramSzkB"),
            (cfg.ofmap_kb, "OfmapSramSzkB"),
        ] {
            if v == 0 || v > (1 << 40) {
                return Err(err(
                    file,
                    format!("[{ap}] {k} = {v} must be between 1 and 2^40"),
                ));
            }
        }
        Ok(cfg)
    }
}
