//! XLA:TPU's own compiles (libtpu, compile-only; `tests/data/xla/`) as the reference for
//! TPU tensor storage: every entry parameter of ResNet-18/50 (batch 1 and 8) and a
//! GPT-2 block, on v5e, v6e and v5p, is stored in the layout the layout crate's TPU
//! default gives it, at XLA's size, and the sizes add up to XLA's argument bytes.

use serde_json::Value;
use tpusim_layout::{parse_valid, sizes, tpu_default, Shape, TpuGen};

fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/xla/xla_reference.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn default_layouts_are_xla_layouts_for_every_entry_parameter() {
    let r = reference();
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 15);
    let mut params = 0;
    for c in cases {
        let gen: TpuGen = c["chip"].as_str().unwrap().parse().unwrap();
        let mut total = 0u64;
        for hlo in c["parameter_hlo"].as_array().unwrap() {
            let hlo = hlo.as_str().unwrap();
            let Shape::Array(xla) = parse_valid(hlo).unwrap() else {
                panic!("{hlo} is not an array")
            };
            let dims: Vec<u64> = xla.dims.iter().filter_map(|d| d.allocated()).collect();
            let ours = tpu_default(xla.element_type, &dims, gen).unwrap();
            assert_eq!(ours.to_string(), xla.to_string(), "{} on {gen}", c["model"]);
            total += sizes(&ours).unwrap().array_size_bytes;
            params += 1;
        }
        let want = c["memory_analysis"]["argument_size_in_bytes"]
            .as_u64()
            .unwrap();
        assert_eq!(total, want, "{} b{} on {gen}", c["model"], c["batch"]);
    }
    assert!(params > 500, "{params}");
}

#[test]
fn the_resnet_input_xla_stores_is_not_the_row_major_tiling() {
    // the reference itself: NHWC bf16[1,224,224,3] keeps W·C on the minor tiles, 344,064
    // bytes, where {3,2,1,0} would pad C = 3 to 128 lanes (12.8 MB)
    let r = reference();
    let c = &r["cases"][0];
    assert_eq!(
        c["input_parameter_hlo"],
        "bf16[1,224,224,3]{2,1,3,0:T(8,128)(2,1)}"
    );
    let Shape::Array(a) = parse_valid("bf16[1,224,224,3]{2,1,3,0:T(8,128)(2,1)}").unwrap() else {
        unreachable!()
    };
    assert_eq!(sizes(&a).unwrap().array_size_bytes, 344_064);
}
