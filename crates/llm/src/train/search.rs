//! The sharding search: every factorisation of a slice into data, FSDP, tensor,
//! pipeline and expert degrees that places on its axes, evaluated; the fastest
//! step that fits wins, and the runners-up say why they lose.

use super::step::{evaluate, TrainAlternative, TrainInput, TrainReport};
use crate::axes::{place, Degrees};
use crate::error::{bad, Result};
use std::cmp::Ordering;

fn divisors(n: u64) -> Vec<u64> {
    let mut d: Vec<u64> = (1..=n)
        .take_while(|i| i * i <= n)
        .filter(|i| n % i == 0)
        .collect();
    let big: Vec<u64> = d.iter().rev().map(|i| n / i).collect();
    d.extend(big);
    d.dedup();
    d
}

/// Every candidate sharding of the slice: tp divides the heads (and tp_d, the second
/// tensor axis, the model dimension, beside a tp above 1), pp the layers, ep the
/// experts; sequence parallelism only when asked.
pub fn candidates(input: &TrainInput) -> Vec<Degrees> {
    let m = &input.model;
    let n = input.slice.chips();
    let mut out = Vec::new();
    for tp in divisors(n).into_iter().filter(|t| m.heads % t == 0) {
        let second_axis = |d: &u64| *d == 1 || (tp > 1 && m.d_model % d == 0);
        for tp_d in divisors(n / tp).into_iter().filter(second_axis) {
            let r1 = n / tp / tp_d;
            for pp in divisors(r1).into_iter().filter(|p| m.layers % p == 0) {
                let r2 = r1 / pp;
                for ep in divisors(r2).into_iter().filter(|e| m.experts % e == 0) {
                    let r3 = r2 / ep;
                    for fsdp in divisors(r3) {
                        let deg = Degrees {
                            tp,
                            tp_d,
                            pp,
                            ep,
                            fsdp,
                            dp: r3 / fsdp,
                            sp: 1,
                            dcn_dp: input.slices / input.dcn_fsdp,
                            dcn_fsdp: input.dcn_fsdp,
                        };
                        if place(&input.slice, &deg).is_ok() {
                            out.push(deg);
                        }
                    }
                }
            }
        }
    }
    out
}

fn order(a: &TrainReport, b: &TrainReport) -> Ordering {
    // Among equal steps (every compute-bound sharding ties in the ideal model),
    // the one with the least communication, then the least memory.
    (!a.fits, a.step_s, a.comms.total(), a.memory_per_chip_bytes)
        .partial_cmp(&(!b.fits, b.step_s, b.comms.total(), b.memory_per_chip_bytes))
        .unwrap_or(Ordering::Equal)
}

/// Why `r` loses to `best`.
fn why(r: &TrainReport, best: &TrainReport) -> String {
    if !r.fits {
        return format!(
            "memory: {:.1} GB per chip > {:.1} GB of HBM",
            r.memory_per_chip_bytes / 1e9,
            r.hbm_bytes_per_chip / 1e9
        );
    }
    let slower = (r.step_s / best.step_s - 1.0) * 100.0;
    if r.bubble_s > 0.05 * r.compute_s {
        return format!(
            "bubbles: pipeline bubbles take {:.0}% of compute; {slower:.1}% slower",
            100.0 * r.bubble_s / r.compute_s
        );
    }
    if r.bound != "compute" {
        return format!("comms bound: {}; {slower:.1}% slower", r.bound_detail);
    }
    format!("{slower:.1}% slower ({})", r.bound_detail)
}

/// Search the slice; the best report carries up to five runners-up.
pub fn best(input: &TrainInput) -> Result<TrainReport> {
    let mut reports: Vec<TrainReport> = candidates(input)
        .into_iter()
        .filter_map(|d| evaluate(input, d).ok())
        .collect();
    if reports.is_empty() {
        // Say why the plainest sharding fails (usually too few sequences).
        let fsdp = Degrees {
            fsdp: input.slice.chips(),
            dcn_dp: input.slices / input.dcn_fsdp,
            dcn_fsdp: input.dcn_fsdp,
            ..Degrees::default()
        };
        evaluate(input, fsdp)?;
        return Err(bad(
            "--slice",
            input.slice.shape(),
            "no sharding of this slice places the model (heads, layers and batch do not divide)",
        ));
    }
    reports.sort_by(order);
    let best = reports.remove(0);
    // The best of each other family of strategies (which degrees are above 1).
    let family = |d: &Degrees| {
        [
            d.dp > 1,
            d.fsdp > 1,
            d.tp > 1,
            d.tp_d > 1,
            d.pp > 1,
            d.ep > 1,
        ]
    };
    let mut seen = vec![family(&best.sharding)];
    let mut firsts = Vec::new();
    for r in &reports {
        let f = family(&r.sharding);
        if !seen.contains(&f) {
            seen.push(f);
            firsts.push(r);
        }
    }
    let runners = firsts
        .into_iter()
        .take(5)
        .map(|r| TrainAlternative {
            sharding: r.sharding,
            step_s: r.step_s,
            fits: r.fits,
            why: why(r, &best),
        })
        .collect();
    Ok(TrainReport {
        runners_up: runners,
        ..best
    })
}
