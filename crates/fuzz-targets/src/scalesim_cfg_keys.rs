//! SCALE-Sim configs built from random keys and values (structured): reaches the
//! validation of every key, then the full compat replay on a small layer.
use arbitrary::Arbitrary;
use tpusim_systolic::scalesim::{compat, config::ScaleConfig, ours, topology::parse_topology};

const KEYS: [&str; 16] = [
    "ArrayHeight",
    "ArrayWidth",
    "IfmapSramSzkB",
    "FilterSramSzkB",
    "OfmapSramSzkB",
    "IfmapOffset",
    "FilterOffset",
    "OfmapOffset",
    "Dataflow",
    "Bandwidth",
    "ReadRequestBuffer",
    "WriteRequestBuffer",
    "InterfaceBandwidth",
    "UseRamulatorTrace",
    "SparsitySupport",
    "MemoryBanks",
];
const VALUES: [&str; 12] = [
    "ws",
    "os",
    "is",
    "USER",
    "CALC",
    "True",
    "False",
    "0",
    "1",
    "-3",
    "4294967295",
    "1e3",
];

/// The structured input.
#[derive(Arbitrary, Debug)]
pub struct Cfg {
    rows: u8,
    cols: u8,
    kb: u8,
    bw: u8,
    dataflow: u8,
    user: bool,
    extra: Vec<(u8, u8, u16)>,
}

/// One input, as the fuzzer gives it.
pub fn run(c: Cfg) {
    let mut text = format!(
        "[general]\nrun_name = f\n[architecture_presets]\nArrayHeight: {}\nArrayWidth: {}\nIfmapSramSzkB: {}\nFilterSramSzkB: {}\nOfmapSramSzkB: {}\nDataflow: {}\nBandwidth: {}\n",
        c.rows % 33, c.cols % 33, c.kb % 9, c.kb % 7, c.kb % 5,
        ["ws", "os", "is"][c.dataflow as usize % 3], c.bw % 17
    );
    for (k, v, n) in c.extra.iter().take(8) {
        let value = if n % 2 == 0 {
            VALUES[*v as usize % VALUES.len()].to_string()
        } else {
            n.to_string()
        };
        text.push_str(&format!("{}: {value}\n", KEYS[*k as usize % KEYS.len()]));
    }
    text.push_str(&format!(
        "[run_presets]\nInterfaceBandwidth: {}\n",
        if c.user { "USER" } else { "CALC" }
    ));
    let Ok(cfg) = ScaleConfig::parse(&text, "c.cfg") else {
        return;
    };
    let topo = "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\nc1,10,10,3,3,3,6,1,\n";
    let (_, layers) = parse_topology(topo, "t.csv", None).expect("fixed topology");
    // The full replay costs time in proportion to the demand rows (about 2 R + C + M
    // per fold), bounded only by the documented replay limit (200 million rows, minutes):
    // replay arrays up to 512 on a side, where every run stays well under a second.
    if cfg.array.rows.max(cfg.array.cols) <= 512 {
        let _ = compat::layer_report(&cfg, &layers[0]);
    } else {
        let _ = compat::compute_report(&cfg, &layers[0]);
    }
    let _ = ours::layer_report(&cfg, &layers[0], false);
}
