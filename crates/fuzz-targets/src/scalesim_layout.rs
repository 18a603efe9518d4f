//! SCALE-Sim 3 layout files (`systolic run --scalesim-compat --layout`): parse, then run
//! the compat report of a small GEMM with both custom layouts on, in USER mode (banked
//! SRAM lines, bank conflicts, the sliding window that SCALE-Sim may loop in forever).
use tpusim_systolic::scalesim::topology::parse_topology;
use tpusim_systolic::scalesim::{compat, config::ScaleConfig, layout::parse_layout};

/// The config every input runs under: an 8×8 ws array, 1 kB SRAMs, USER bandwidth, 2
/// banks of 1 port, both custom layouts on.
const CONFIG: &str = "[general]\nrun_name = fuzz\n\n[architecture_presets]\nArrayHeight : 8\nArrayWidth : 8\nIfmapSramSzkB : 1\nFilterSramSzkB : 1\nOfmapSramSzkB : 1\nIfmapOffset : 0\nFilterOffset : 10000000\nOfmapOffset : 20000000\nBandwidth : 10\nDataflow : ws\nMemoryBanks : 1\n\n[layout]\nIfmapCustomLayout : True\nIfmapSRAMBankBandwidth : 10\nIfmapSRAMBankNum : 2\nIfmapSRAMBankPort : 1\nFilterCustomLayout : True\nFilterSRAMBankBandwidth : 10\nFilterSRAMBankNum : 2\nFilterSRAMBankPort : 1\n\n[sparsity]\nSparsitySupport : false\nSparseRep : ellpack_block\nOptimizedMapping : false\nBlockSize : 8\nRandomNumberGeneratorSeed : 40\n\n[run_presets]\nInterfaceBandwidth : USER\n";

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(layout) = parse_layout(text, "layout.csv") else {
        return;
    };
    let cfg = ScaleConfig::parse(CONFIG, "c.cfg").expect("fixed config");
    let (_, layers) =
        parse_topology("Layer,M,N,K,\ng,12,9,10,\n", "t.csv", None).expect("fixed topology");
    let _ = compat::layer_report_with_layout(&cfg, Some(&layout), &layers[0]);
}
