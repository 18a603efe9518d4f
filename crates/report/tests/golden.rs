//! Golden JSON of a small model (tests/data/tiny.csv) on a TPU and an NPU, compared
//! field by field, plus hand-derived figures that pin the golden numbers themselves.
//! Rewrite the golden files with `TPUSIM_BLESS=1` after an intended change.

use serde_json::Value;
use std::path::PathBuf;
use tpusim_report::{report, ModelSource, Report, Request};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn tiny(chip: &str) -> Report {
    let text = std::fs::read_to_string(data("tiny.csv")).unwrap();
    report(&Request {
        model: ModelSource::Topology {
            name: "tiny".into(),
            text,
        },
        chip: chip.into(),
        batch: 1,
        dtype: None,
        resolution: Some((224, 224)),
        vmem_bytes: None,
        input_dtype: None,
        fuse: true,
        chip_file: None,
    })
    .unwrap()
}

/// Compare two JSON values: same keys and strings and integers, floats to 1e-9 relative.
fn same(path: &str, a: &Value, b: &Value, diffs: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => same(&format!("{path}.{k}"), u, v, diffs),
                    _ => diffs.push(format!("{path}.{k}: present in only one")),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                diffs.push(format!("{path}: {} vs {} items", x.len(), y.len()));
            }
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                same(&format!("{path}[{i}]"), u, v, diffs);
            }
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (u, v) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (u - v).abs() > 1e-9 * u.abs().max(v.abs()) {
                diffs.push(format!("{path}: {u} vs {v}"));
            }
        }
        _ => {
            if a != b {
                diffs.push(format!("{path}: {a} vs {b}"));
            }
        }
    }
}

fn golden(chip: &str) -> Report {
    let r = tiny(chip);
    let fresh = serde_json::to_value(&r).unwrap();
    let file = data(&format!("tiny_{chip}.json"));
    if std::env::var_os("TPUSIM_BLESS").is_some() {
        std::fs::write(&file, serde_json::to_string_pretty(&fresh).unwrap() + "\n").unwrap();
    }
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|_| panic!("{} missing: run with TPUSIM_BLESS=1", file.display()));
    let want: Value = serde_json::from_str(&text).unwrap();
    let mut diffs = Vec::new();
    same("$", &want, &fresh, &mut diffs);
    assert!(
        diffs.is_empty(),
        "report differs from {}:\n{}",
        file.display(),
        diffs.join("\n")
    );
    r
}

/// Figures of the tiny net derived by hand, true on any chip.
fn hand_checks(r: &Report, elem_bytes: u64) {
    // conv1: 16·16 outputs × 32 filters × 3·3·3 taps; conv2: 16·16 × 64 × 3·3·32
    let macs = 16 * 16 * 32 * 27 + 16 * 16 * 64 * 288;
    assert!(
        r.flops >= 2 * macs && r.flops <= 2 * macs + 2 * 16 * 16 * (32 + 64),
        "flops {}",
        r.flops
    );
    let names: Vec<&str> = r.layers.iter().map(|l| l.name.as_str()).collect();
    let cast = r.chip_kind == "npu";
    if cast {
        // NPUs: the f32 input is cast on the chip first, and the 16-bit output back to
        // f32 last (as TPU-MLIR compiles it)
        assert_eq!(names, ["conv1.input_cast", "conv1", "conv2", "conv2_cast"]);
        assert_eq!(r.layers[0].bytes_logical, 18 * 18 * 3 * (4 + elem_bytes));
        assert_eq!(r.layers[3].bytes_logical, 16 * 16 * 64 * (elem_bytes + 4));
    } else {
        assert_eq!(names, ["conv1", "conv2"]);
    }
    // logical bytes of conv1: input 18·18·3, filter 32·3·3·3 (+ bias 32 if any), output 16·16·32
    let l1 = &r.layers[usize::from(cast)];
    let base = (18 * 18 * 3 + 32 * 27 + 16 * 16 * 32) * elem_bytes;
    assert!(
        l1.bytes_logical == base || l1.bytes_logical == base + 32 * elem_bytes,
        "conv1 logical {}",
        l1.bytes_logical
    );
    for l in &r.layers {
        assert!((l.memory_s - l.bytes_moved as f64 / r.offchip_bytes_per_s).abs() <= 1e-15);
    }
    let sum: f64 = r.groups.iter().map(|g| g.time_s).sum();
    assert_eq!(r.total_time_s, sum);
}

#[test]
fn tiny_on_v5e() {
    let r = golden("v5e");
    hand_checks(&r, 2);
    // the 3-channel input as XLA:TPU stores it (libtpu's default for these dims): C (3)
    // second-minor on 4-row tiles, W (18) minor padded to 128 lanes, for each of the 18
    // rows of H
    let input = r.tensors.iter().find(|t| t.name == "conv1.input").unwrap();
    assert_eq!(input.layout, "bf16[1,18,18,3]{2,3,1,0:T(4,128)(2,1)}");
    assert_eq!(input.bytes_logical, 18 * 18 * 3 * 2);
    assert_eq!(input.bytes_stored, 18 * 4 * 128 * 2);
    assert_eq!(r.peak_flops_per_s, 1.97e14);
    assert_eq!(r.offchip_bytes_per_s, 8.1e11);
}

#[test]
fn tiny_on_bm1684x() {
    let r = golden("bm1684x");
    hand_checks(&r, 2);
    assert_eq!(r.bytes_moved, r.bytes_logical);
}
