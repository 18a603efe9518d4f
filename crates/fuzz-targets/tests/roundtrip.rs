//! What tpusim prints in a format it also reads parses back to the same value: plan
//! JSON (`plan --json` → `plan verify`), TPU-MLIR caches (`--export-tpu-mlir` →
//! `--import-tpu-mlir`), NPU preset TOML (`lmem show --toml` → `--chip-file`), chip TOML
//! (`chip show --toml` → `--chip-file`) and canonical layout text.

use proptest::prelude::*;
use tpusim_layout::{sizes, Shape};
use tpusim_planner::{tpumlir, NpuChip, Plan, PlanOptions};

fn planned(model: &str, chip: &str, batch: u64, res: u64) -> Plan {
    let g = tpusim_graph::load(model, batch, (res, res)).unwrap();
    let g = tpusim_graph::fuse::fuse(&g).unwrap();
    let chip = NpuChip::preset(chip).unwrap();
    tpusim_planner::plan(&g, &chip, &PlanOptions::default()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn plans_and_caches_parse_back(
        model in prop::sample::select(vec!["resnet18", "mobilenetv2"]),
        chip in prop::sample::select(vec!["bm1684x", "bm1688", "cv183x"]),
        batch in 1u64..4,
        res in prop::sample::select(vec![32u64, 48, 64]),
    ) {
        let plan = planned(model, chip, batch, res);
        let text = serde_json::to_string_pretty(&plan).unwrap();
        let back: Plan = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(&back, &plan);
        prop_assert!(tpusim_planner::verify::verify(&back).is_ok());
        let cache = tpumlir::export(&plan);
        let parsed = tpumlir::parse(&tpumlir::to_text(&cache)).unwrap();
        prop_assert_eq!(parsed, cache);
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn canonical_layout_text_is_a_fixed_point(
        ty in prop::sample::select(vec!["pred", "s4", "s8", "bf16", "f32", "c64"]),
        dims in prop::collection::vec(1u64..300, 0..4),
        tile in prop::collection::vec(1u64..260, 0..3),
    ) {
        let order: Vec<String> = (0..dims.len()).rev().map(|d| d.to_string()).collect();
        let tiles = if tile.is_empty() {
            String::new()
        } else {
            format!(":T({})", tile.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
        };
        let text = format!(
            "{ty}[{}]{{{}{tiles}}}",
            dims.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
            order.join(",")
        );
        if let Ok(s) = tpusim_layout::parse_valid(&text) {
            // the printed text is a fixed point and means the same array; the parsed
            // values may differ in form only (`pred[]{:}` has an empty layout, its
            // canonical `pred[]` none)
            let canonical = s.to_string();
            let again = tpusim_layout::parse_valid(&canonical).unwrap();
            prop_assert_eq!(&again.to_string(), &canonical);
            if let (Shape::Array(a), Shape::Array(b)) = (&s, &again) {
                prop_assert_eq!(sizes(a).ok(), sizes(b).ok(), "{}", canonical);
            }
        }
    }
}

#[test]
fn a_scalar_with_an_empty_layout_prints_as_xla_prints_it() {
    // proptest found `pred[]{}` printing as `pred[]`; XLA refuses `{}` (a syntax error)
    // and prints its empty-attribute form `pred[]{:}` as `pred[]`, and so do we now
    assert!(tpusim_layout::parse_valid("pred[]{}").is_err());
    let s = tpusim_layout::parse_valid("pred[]{:}").unwrap();
    assert_eq!(s.to_string(), "pred[]");
    let again = tpusim_layout::parse_valid(&s.to_string()).unwrap();
    assert_eq!(again.to_string(), s.to_string());
}

#[test]
fn preset_and_chip_toml_parse_back() {
    for chip in NpuChip::presets() {
        let back = NpuChip::from_toml(&chip.to_toml()).unwrap();
        assert_eq!(back, chip, "{}", chip.geometry.name);
    }
    for chip in tpusim_chip::database::builtin().unwrap() {
        let text = tpusim_chip::database::builtin_toml(&chip.name).unwrap();
        let back = tpusim_chip::Chip::from_toml_str(text, &chip.name).unwrap();
        assert_eq!(back, chip, "{}", chip.name);
    }
}
