//! Plan files (`plan verify`): parse the JSON and verify it.

/// One input, as the fuzzer gives it.
pub fn run(data: &[u8]) {
    let Ok(plan) = serde_json::from_slice::<tpusim_planner::Plan>(data) else {
        return;
    };
    let _ = tpusim_planner::verify::verify(&plan);
}
