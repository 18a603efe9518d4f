//! Where TPU-MLIR 1.30.2 fuses an attention into `tpu.Attention`, against its own caches
//! of the transformer zoo: a bm1684x cache names `<out>_head_k` ops for every head of a
//! fused attention (bert_d384_s128, bert_d192_s16, bert_d320_s5_b3, bert_d256_s384,
//! bert_d320_s256_b2 and bert_d224_s48_b4, Q, K and V three weight matmuls; the last three
//! held out, the rule's check, the last of the eleventh round; then the twelfth round's
//! bert_d288_s160_b3, the thirteenth's bert_d320_s112_b3 and the fourteenth's
//! bert_d384_s72_b5, and the fifteenth's bert_d352_s96_b3, held out too); the other
//! networks' caches name none, nor does any bm1688 cache.
use tpusim_graph::nd::{import_onnx, Bind};
use tpusim_planner::tpumlir::nd_fusion::fused_attentions;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tx_zoo");

fn zoo() -> Vec<String> {
    let mut nets: Vec<String> = std::fs::read_dir(DATA)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix("_static.onnx").map(str::to_string)
        })
        .collect();
    nets.sort();
    nets
}

/// How many attentions TPU-MLIR's cache of `net` on `chip` fused: its `…_head_0` ops.
fn fused_in_cache(net: &str, chip: &str) -> usize {
    let text = std::fs::read_to_string(format!("{DATA}/{net}_{chip}.tpumlir_cache.json")).unwrap();
    text.matches("_head_0\"").count()
}

#[test]
fn the_attentions_tpu_mlir_fuses_are_those_its_caches_name() {
    let nets = zoo();
    assert_eq!(nets.len(), 52);
    let bind = Bind {
        batch: 1,
        seq: 1,
        past: 0,
    };
    let mut fused_nets = Vec::new();
    for net in &nets {
        let g = import_onnx(
            &std::fs::read(format!("{DATA}/{net}_static.onnx")).unwrap(),
            &bind,
        )
        .unwrap();
        for chip in ["bm1684x", "bm1688"] {
            let ours = fused_attentions(&g, chip);
            assert_eq!(
                ours.len(),
                fused_in_cache(net, chip),
                "{net} on {chip}: {ours:?}"
            );
            if !ours.is_empty() {
                fused_nets.push(format!("{net} {chip}"));
            }
        }
    }
    // the check has something to find
    assert_eq!(
        fused_nets,
        [
            "bert_d192_s16 bm1684x",
            "bert_d224_s48_b4 bm1684x",
            "bert_d256_s384 bm1684x",
            "bert_d288_s160_b3 bm1684x",
            "bert_d320_s112_b3 bm1684x",
            "bert_d320_s256_b2 bm1684x",
            "bert_d320_s5_b3 bm1684x",
            "bert_d352_s96_b3 bm1684x",
            "bert_d384_s128 bm1684x",
            "bert_d384_s72_b5 bm1684x"
        ]
    );
}

/// Graphs written as users export them (separate or joint Q, K, V; with and without a
/// mask; fixed or dynamic axes; one head) and bert_tiny, whose IR version TPU-MLIR does not
/// simplify: what TPU-MLIR fused on bm1684x (`tx_fusion/tpumlir_fused.json`) is what
/// the detector finds.
#[test]
fn the_attentions_tpu_mlir_fuses_in_user_exports_are_found() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tx_fusion");
    let text = std::fs::read_to_string(format!("{dir}/tpumlir_fused.json")).unwrap();
    let seen: serde_json::Value = serde_json::from_str(&text).unwrap();
    let nets = seen["nets"].as_object().unwrap();
    assert_eq!(nets.len(), 6);
    for (net, row) in nets {
        let (path, seq) = match net.as_str() {
            "bert_tiny" => (
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../graph/tests/data/nd/bert_tiny.onnx"
                )
                .to_string(),
                128,
            ),
            _ => (format!("{dir}/{net}.onnx"), 64),
        };
        let bind = Bind {
            batch: 1,
            seq,
            past: 0,
        };
        let g = import_onnx(&std::fs::read(&path).unwrap(), &bind).unwrap();
        let fused = row["fused"].as_u64().unwrap() as usize;
        assert_eq!(fused_attentions(&g, "bm1684x").len(), fused, "{net}");
        assert!(fused_attentions(&g, "bm1688").is_empty(), "{net}");
    }
}
