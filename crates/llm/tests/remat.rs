//! MaxText's remat policies: what each keeps (checkpoint memory) and what the
//! backward pass reruns (FLOPs), against the hand formulas of a LLaMA layer.

use tpusim_llm::remat::Remat;
use tpusim_llm::zoo;

#[test]
fn save_policies_rerun_the_matmuls_after_what_they_keep() {
    let m = zoo::lookup("llama-2-70b").unwrap();
    let (d, f, l) = (8192.0, 28672.0, 80.0);
    let (q, kv) = (64.0 * 128.0, 2.0 * 8.0 * 128.0);
    let policy = |name: &str| Remat::parse(name).unwrap();
    // the MLP's gate and up projections, per token, forward
    let mlpwi = 2.0 * l * 2.0 * d * f;
    let r = policy("save_dot_except_mlpwi").recomputed(&m);
    assert_eq!(r.matmul_flops, mlpwi);
    assert_eq!(r.attention_forwards, 1.0);
    assert_eq!(policy("save_dot_except_mlp").recomputed(&m), r);
    let with_context = policy("save_dot_with_context_except_mlp").recomputed(&m);
    assert_eq!(
        (with_context.matmul_flops, with_context.attention_forwards),
        (mlpwi, 0.0)
    );
    let qkv_only = policy("save_qkv_proj").recomputed(&m);
    assert_eq!(qkv_only.matmul_flops, mlpwi + 2.0 * l * q * d);
    let out_only = policy("save_out_proj").recomputed(&m);
    assert_eq!(out_only.matmul_flops, mlpwi + 2.0 * l * d * (q + kv));
    // full reruns every weight (2·P a token, the book's 8·P for 6·P counted)
    let full = Remat::Full.recomputed(&m);
    assert_eq!(full.matmul_flops, 2.0 * m.params().params_active as f64);
    assert_eq!(Remat::Minimal.recomputed(&m).matmul_flops, 0.0);
    assert_eq!(Remat::None.recomputed(&m).attention_forwards, 0.0);
    // checkpoints: the layer input plus what is kept, in D-wide vectors
    // out_proj and mlpwo kept beside the projections
    assert_eq!(
        policy("save_dot_except_mlpwi").checkpoints(&m),
        1.0 + (q + kv) / d + 2.0
    );
    assert_eq!(policy("save_qkv_proj").checkpoints(&m), 1.0 + (q + kv) / d);
    assert_eq!(
        policy("minimal_with_context").checkpoints(&m),
        Remat::Minimal.checkpoints(&m) + q / d + 1.0
    );
}

#[test]
fn policies_order_memory_against_recompute() {
    let m = zoo::lookup("mixtral-8x7b").unwrap();
    let names = [
        "full",
        "save_qkv_proj",
        "save_dot_except_mlp",
        "minimal",
        "none",
    ];
    let policies: Vec<Remat> = names.iter().map(|n| Remat::parse(n).unwrap()).collect();
    for w in policies.windows(2) {
        assert!(w[0].checkpoints(&m) < w[1].checkpoints(&m), "{w:?}");
        let (a, b) = (w[0].recomputed(&m), w[1].recomputed(&m));
        assert!(a.matmul_flops >= b.matmul_flops && a.attention_forwards >= b.attention_forwards);
    }
    // offloaded outputs are kept, off the device: rerun like kept ones, not counted in HBM
    let policy = |name: &str| Remat::parse(name).unwrap();
    let offloaded = policy("custom:decoder_layer_input=offload,query_proj=offload,key_proj=offload,value_proj=offload,out_proj=offload");
    let on_device =
        policy("custom:query_proj=device,key_proj=device,value_proj=device,out_proj=device");
    assert_eq!(offloaded.recomputed(&m), on_device.recomputed(&m));
    assert_eq!(offloaded.checkpoints(&m), 0.0);
    assert_eq!(offloaded.offloaded(&m), on_device.checkpoints(&m));
    assert_eq!(
        offloaded.name(),
        "custom:decoder_layer_input=offload,query_proj=offload,key_proj=offload,value_proj=offload,out_proj=offload"
    );
    let (preset, custom) = (
        policy("qkv_proj_offloaded"),
        policy("custom:qkv_proj=offload"),
    );
    assert_eq!(preset.recomputed(&m), custom.recomputed(&m));
    assert_eq!(preset.offloaded(&m), custom.offloaded(&m));
    assert_eq!(preset.checkpoints(&m), 1.0);
    assert!(Remat::parse("custom:mlpwi_0=offload,mlpwi_1=remat").is_err());
    assert!(Remat::parse("custom:decoder_layer_input=remat").is_err());
    assert!(Remat::parse("custom:query=offload").is_err());
    let e = Remat::parse("save_everything").unwrap_err().to_string();
    assert!(e.contains("save_dot_except_mlpwi"), "{e}");
}
