//! A user's own measurements (`llm validate --data`) are predicted as the shipped
//! rows are: the same row gives the same prediction whichever way it names its model
//! and sharding.

use std::collections::HashMap;
use tpusim_llm::validate::{validate, validate_rows, JETSTREAM_V5E, USER_SPLIT};
use tpusim_llm::Efficiency;

#[test]
fn a_users_rows_predict_as_the_shipped_rows_do() {
    let eff = Efficiency::calibrated();
    let shipped: HashMap<String, f64> = validate(&eff)
        .unwrap()
        .into_iter()
        .map(|c| (c.case, c.predicted))
        .collect();
    let text = include_str!("data/measurements_user.jsonl");
    let got: HashMap<String, (f64, String)> = validate_rows(text, "mine.jsonl", &eff)
        .unwrap()
        .into_iter()
        .map(|c| (c.case, (c.predicted, c.split)))
        .collect();
    let gemma = "jetstream-pt-Gemma2B-bfloat16-b512-c2048-2024-05-14-v5e-8";
    let llama = "jetstream-pt-Llama27B-bfloat16-b96-c2048-2024-03-28-v5e-8";
    let maxtext = "maxtext-v5e-16B-1x-v5e-256";
    for id in [gemma, llama, maxtext] {
        assert_eq!(got[id], (shipped[id], USER_SPLIT.to_string()), "{id}");
    }
    // tp=1, dp=8 written out instead of the note's --shard_on_batch, in its own split
    assert_eq!(got["g2-explicit"], (shipped[gemma], "mine".to_string()));
    // the built-in model by name instead of its config
    assert_eq!(got["l2-builtin"].0, shipped[llama]);
    assert_eq!(got["t-copy"].0, shipped[maxtext]);
    // requests of 100 output tokens, not 338: each prefill spread over fewer tokens
    assert!(got["l2-short"].0 < 0.95 * shipped[llama]);
}

#[test]
fn a_row_that_is_wrong_is_named_by_its_line() {
    let eff = Efficiency::calibrated();
    let e = validate_rows("\n{\"id\":\"x\"}\n", "mine.jsonl", &eff).unwrap_err();
    assert_eq!(e.to_string(), "mine.jsonl line 2: field 'model' is missing");
    let row = JETSTREAM_V5E.lines().next().unwrap();
    let labelled = format!("{},\"split\":3}}", row.trim_end().trim_end_matches('}'));
    let e = validate_rows(&labelled, "m", &eff).unwrap_err();
    assert_eq!(
        e.to_string(),
        "m line 1: field 'split' is 3; expected a non-empty string"
    );
}

/// The rows read off MaxText's recipes hold together: each step's tokens are the chips
/// times the per-device batch and sequence, and the logged tokens/s/device times the
/// logged step time give a device's share of them.
#[test]
fn the_recipe_rows_agree_with_their_own_logs() {
    use tpusim_llm::validate::MAXTEXT_TPU_RECIPES;
    let mut splits = std::collections::BTreeMap::<String, usize>::new();
    for line in MAXTEXT_TPU_RECIPES.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let n = |k: &str| r[k].as_f64().unwrap();
        let chips: f64 = r["slice"]
            .as_str()
            .unwrap()
            .split('x')
            .map(|d| d.parse::<f64>().unwrap())
            .product();
        let per_device = n("per_device_batch") * n("seq");
        assert_eq!(n("batch_tokens"), chips * n("slices") * per_device, "{r}");
        let logged = n("measured_tokens_per_s_per_device") * n("step_s");
        assert!(
            (logged / per_device - 1.0).abs() < 0.002,
            "{}: {logged}",
            r["id"]
        );
        *splits
            .entry(r["split"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let want = [("fit_v6e", 5), ("held_out_v5p", 2), ("held_out_v6e", 11)];
    assert_eq!(splits, want.map(|(s, n)| (s.to_string(), n)).into());
}

/// The vLLM rows (tpu-recipes' LLaMA-3.x recipe on v6e-8) hold together: each
/// throughput is the run's generated tokens over its duration, every request brought
/// its prompt and generated its output in full (`--ignore-eos`), and no row is fitted.
#[test]
fn the_vllm_rows_agree_with_their_own_logs() {
    use tpusim_llm::validate::VLLM_V6E_HELD_OUT;
    let rows: Vec<serde_json::Value> = VLLM_V6E_HELD_OUT
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        let n = |k: &str| r[k].as_f64().unwrap();
        let per_s = n("total_generated_tokens") / n("duration_s");
        assert!(
            (per_s / n("throughput_tokens_per_s") - 1.0).abs() < 1e-4,
            "{r}"
        );
        let requests = 3000.0;
        assert_eq!(
            n("total_generated_tokens"),
            requests * n("mean_output_tokens")
        );
        // `--random-input-len 1000` came out as 999 tokens a prompt
        assert_eq!(n("total_input_tokens"), requests * n("mean_prompt_tokens"));
        assert_eq!(r["kv_cache"], "paged");
        assert_eq!(r["split"], "held_out_v6e_vllm");
    }
}

/// A paged row's decode steps read each request's prompt and half its output, not
/// the whole `cache_length`: it predicts exactly what a dense row whose cache is that
/// long predicts (999 + 1,000 / 2 here, worked by hand).
#[test]
fn a_paged_row_reads_its_requests_own_tokens() {
    use tpusim_llm::validate::{live_context, VLLM_V6E_HELD_OUT};
    let eff = Efficiency::calibrated();
    let row = VLLM_V6E_HELD_OUT.lines().next().unwrap();
    let predict = |text: String| validate_rows(&text, "m", &eff).unwrap()[0].predicted;
    let paged = predict(row.to_string());
    let dense_at = |tokens: u64| {
        predict(
            row.replace("\"kv_cache\": \"paged\"", "\"kv_cache\": \"dense\"")
                .replace(
                    "\"cache_length\": 2048",
                    &format!("\"cache_length\": {tokens}"),
                ),
        )
    };
    assert_eq!(paged, dense_at(1499));
    assert!(paged > dense_at(2048));
    assert_eq!(live_context(1000, 1000.0), 1500);
    assert_eq!(live_context(161, 338.0), 330);
    assert_eq!(live_context(0, 1.0), 1);
    let wrong = row.replace("\"kv_cache\": \"paged\"", "\"kv_cache\": \"ragged\"");
    let e = validate_rows(&wrong, "m", &eff).unwrap_err();
    assert_eq!(
        e.to_string(),
        "m line 1: field 'kv_cache' is \"ragged\"; expected \"dense\" or \"paged\""
    );
}
