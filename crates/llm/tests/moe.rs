//! Experts an MoE step reads: the expected number its tokens touch with uniform
//! routing, against a simulation of the routing itself.

use tpusim_llm::zoo;

/// Mean distinct experts touched when each of `tokens` tokens picks `k` distinct
/// experts of `e` uniformly (a seeded xorshift, `trials` draws).
fn simulated(e: usize, k: usize, tokens: usize, trials: usize) -> f64 {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut total = 0usize;
    for _ in 0..trials {
        let mut hit = vec![false; e];
        for _ in 0..tokens {
            let mut picks: Vec<usize> = (0..e).collect();
            for i in 0..k {
                let j = i + (next() % (e - i) as u64) as usize;
                picks.swap(i, j);
                hit[picks[i]] = true;
            }
        }
        total += hit.iter().filter(|&&h| h).count();
    }
    total as f64 / trials as f64
}

#[test]
fn experts_touched_equal_a_simulated_router() {
    for (name, tokens) in [
        ("mixtral-8x7b", 3),
        ("gpt-oss-20b", 8),
        ("gpt-oss-120b", 20),
    ] {
        let m = zoo::lookup(name).unwrap();
        let (e, k) = (m.experts as usize, m.experts_active as usize);
        let want = simulated(e, k, tokens, 20_000);
        let got = m.experts_touched(tokens as f64);
        assert!((got / want - 1.0).abs() < 0.01, "{name}: {got} vs {want}");
    }
}

#[test]
fn one_token_reads_the_active_parameters_and_many_read_all() {
    let m = zoo::lookup("gpt-oss-120b").unwrap();
    let p = m.params();
    assert_eq!(m.params_read(1.0), p.params_active as f64);
    assert!((m.params_read(1e6) / p.params as f64 - 1.0).abs() < 1e-12);
    let dense = zoo::lookup("llama-3-8b").unwrap();
    assert_eq!(dense.params_read(1.0), dense.params().params as f64);
}

/// A decode step of one sequence reads Mixtral's active parameters and its cache, not
/// all eight experts: the book's HBM term on those bytes.
#[test]
fn serving_one_sequence_of_an_moe_model_reads_its_active_experts() {
    use tpusim_llm::serve::{serve, ServeInput};
    let m = zoo::lookup("mixtral-8x7b").unwrap();
    let chip = tpusim_chip::lookup("v5e").unwrap();
    let slice = tpusim_llm::slices::parse(&chip, "4x2").unwrap();
    let mut input = ServeInput::new(m.clone(), slice, true);
    input.context = 2048;
    input.tp = Some(8);
    input.dp = Some(1);
    let r = serve(&input).unwrap();
    let weights = m.params().params_active as f64 * 2.0;
    let cache = m.kv_bytes_for_context(2048.0, tpusim_llm::Precision::Bf16);
    let want = (weights + cache) / 8.0 / chip.hbm_bytes_per_s;
    assert!(
        (r.decode.hbm_s / want - 1.0).abs() < 1e-9,
        "{} vs {want}",
        r.decode.hbm_s
    );
}

/// FLOPs of an einsum from its operand shapes: twice the product of every distinct
/// dimension it names (each output element a sum of products over the contracted ones).
fn einsum_flops(dims: &[(char, f64)], spec: &str) -> f64 {
    let mut seen = String::new();
    for c in spec.chars().filter(char::is_ascii_alphabetic) {
        if !seen.contains(c) {
            seen.push(c);
        }
    }
    2.0 * seen
        .chars()
        .map(|c| dims.iter().find(|(n, _)| *n == c).unwrap().1)
        .product::<f64>()
}

/// MaxText's dropping MoE (`layers/moe.py`, `dense_matmul` with a capacity factor), one
/// layer's forward pass written out from its einsums and shapes: dispatch
/// `BSM,BSEC->EBCM`, gate and up `EBCM,EMH->EBCH`, down `EBCH,EHM->EBCM`, combine
/// `EBCM,BSEC->BSM`, with MaxText's capacity `int(max(ceil(S·k/E)·CF, CF))`. Beyond the
/// routed tokens' `k` experts a token, that is the work the model adds: three times
/// over without recomputation, and the forward once more under `full` remat.
#[test]
fn the_dropping_moe_adds_its_einsums_and_empty_slots() {
    use tpusim_llm::remat::Remat;
    use tpusim_llm::train::capacity::{expert_capacity, extra_flops_per_token};
    let m = zoo::lookup("mixtral-8x7b").unwrap();
    for (seq, cf) in [
        (4096u64, 1.25),
        (4096, 1.0),
        (2048, 2.0),
        (1000, 1.3),
        (3, 1.25),
    ] {
        let (e, k) = (m.experts as f64, m.experts_active as f64);
        let c = ((seq as f64 * k / e).ceil() * cf).max(cf).floor();
        assert_eq!(expert_capacity(&m, seq, cf), c, "{seq} {cf}");
        let dims = [
            ('B', 1.0),
            ('S', seq as f64),
            ('M', m.d_model as f64),
            ('E', e),
            ('C', c),
            ('H', m.d_ff as f64),
        ];
        let layer = einsum_flops(&dims, "BSM,BSEC->EBCM")
            + 2.0 * einsum_flops(&dims, "EBCM,EMH->EBCH")
            + einsum_flops(&dims, "EBCH,EHM->EBCM")
            + einsum_flops(&dims, "EBCM,BSEC->BSM");
        let routed = k * 3.0 * 2.0 * (m.d_model * m.d_ff) as f64 * seq as f64;
        let forward = (layer - routed) / seq as f64 * m.layers as f64;
        let none = extra_flops_per_token(&m, seq, cf, Remat::None);
        assert!(
            (none / (3.0 * forward) - 1.0).abs() < 1e-12,
            "{seq} {cf}: {none} {forward}"
        );
        let full = extra_flops_per_token(&m, seq, cf, Remat::Full);
        assert!((full / (4.0 * forward) - 1.0).abs() < 1e-12, "{seq} {cf}");
        let minimal = extra_flops_per_token(&m, seq, cf, Remat::Minimal);
        assert_eq!(minimal, none);
    }
    // a dense model has no experts to dispatch to
    let dense = zoo::lookup("llama-3-8b").unwrap();
    assert_eq!(extra_flops_per_token(&dense, 4096, 1.25, Remat::Full), 0.0);
}
