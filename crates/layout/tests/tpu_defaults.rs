//! TPU default layouts against XLA:TPU itself (libtpu 0.0.50 compile-only devices),
//! data made by `tests/data/gen_tpu_defaults.py` and, for sub-byte, fp8/fp6/fp4 and the
//! remaining integer and complex types, `gen_tpu_defaults.py --more`; and the default
//! rows of `xla_unseen_golden.jsonl`: 1,500 random (generation, type, dims), ranks 0–6,
//! drawn by `bench/layout_unseen.py generate --seed 4604 --n 1500` (jax 0.12.0.1) and
//! never used to build the rules.

use tpusim_layout::{parse_array, sizes, tpu_default, ElementType, TpuGen};

#[test]
fn defaults_match_libtpu() {
    let mut checked = 0;
    let mut mismatches = Vec::new();
    let goldens = [
        include_str!("data/tpu_defaults_golden.jsonl"),
        include_str!("data/tpu_defaults_subbyte_golden.jsonl"),
        include_str!("data/xla_unseen_golden.jsonl"),
    ];
    for line in goldens.iter().flat_map(|g| g.lines()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(want) = v["shape"].as_str() else {
            continue;
        };
        let gen: TpuGen = v["tpu"].as_str().unwrap().parse().unwrap();
        let input = parse_array(v["input"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", v["input"]));
        let dims: Vec<u64> = input.dims.iter().map(|d| d.allocated().unwrap()).collect();
        let got = tpu_default(input.element_type, &dims, gen).unwrap();
        let bytes = sizes(&got).unwrap().array_size_bytes;
        // XLA:TPU allocates at least 512 bytes per argument.
        let want_bytes = v["bytes"].as_u64().unwrap();
        if got.to_string() != want || bytes.max(512) != want_bytes {
            mismatches.push(format!(
                "{gen} {}: ours {got} ({bytes} B), libtpu {want} ({want_bytes} B)",
                v["input"]
            ));
        }
        checked += 1;
    }
    assert!(
        mismatches.is_empty(),
        "{} of {checked} differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(checked > 9000, "{checked}");
}

#[test]
fn spec_examples() {
    let d = |t: ElementType, dims: &[u64]| tpu_default(t, dims, TpuGen::V5e).unwrap().to_string();
    assert_eq!(d(ElementType::F32, &[1000]), "f32[1000]{0:T(1024)}");
    assert_eq!(
        d(ElementType::Bf16, &[2048]),
        "bf16[2048]{0:T(1024)(128)(2,1)}"
    );
    assert_eq!(d(ElementType::F32, &[]), "f32[]{:T(128)}");
    assert_eq!(d(ElementType::F32, &[1000, 1]), "f32[1000,1]{0,1:T(1,128)}");
    assert_eq!(
        d(ElementType::Bf16, &[1, 1000]),
        "bf16[1,1000]{1,0:T(2,128)(2,1)}"
    );
}

/// Fuzz finding: `layout default f32[1,1,…]` with 4000 dims ran for minutes (the choice
/// of minor dims is cubic in the rank); ranks above the bound are an error at once.
#[test]
fn very_high_ranks_are_refused_quickly() {
    use tpusim_layout::MAX_DEFAULT_RANK;
    let f32t: ElementType = "f32".parse().unwrap();
    let ok = vec![1u64; MAX_DEFAULT_RANK];
    assert!(tpu_default(f32t, &ok, TpuGen::V5e).is_ok());
    let e = tpu_default(f32t, &vec![1u64; 4000], TpuGen::V5e).unwrap_err();
    assert!(e.to_string().contains("rank 4000"), "{e}");
}
