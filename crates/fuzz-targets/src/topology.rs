//! SCALE-Sim topology CSVs: the systolic parser (`systolic run`) and the graph importer
//! (`plan/report MODEL.csv`).
use tpusim_systolic::scalesim::topology::{parse_topology, TopoFormat};

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for fmt in [None, Some(TopoFormat::Gemm), Some(TopoFormat::Conv)] {
        let _ = parse_topology(text, "t.csv", fmt);
    }
    let _ = tpusim_graph::from_topology_csv(text, "t", 1);
}
