//! SCALE-Sim configs (`systolic run -c`): whether SCALE-Sim could read it (the compat
//! parse), then parse, run the closed-form report and our own model on a small layer.
use tpusim_systolic::scalesim::{compat, config::ScaleConfig, ours, topology::parse_topology};

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = ScaleConfig::parse_compat(text, "c.cfg");
    let Ok(cfg) = ScaleConfig::parse(text, "c.cfg") else {
        return;
    };
    let topo = "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\nc1,12,12,3,3,4,8,1,\n";
    let (_, layers) = parse_topology(topo, "t.csv", None).expect("fixed topology");
    let _ = compat::compute_report(&cfg, &layers[0]);
    let _ = ours::layer_report(&cfg, &layers[0], true);
}
