//! Times one in-memory relayout, for same-run comparisons driven by another program
//! (`bench/layout_convert_vs_numpy.py` interleaves it with numpy, round by round).
//!
//! `relayout_time FROM TO [REPS]`, e.g.
//! `relayout_time 'f32[8192,8192]' 'f32[8192,8192]{1,0:T(8,128)}' 1`
//!
//! Fills FROM's bytes with a pattern, runs the conversion once untimed (warm-up), then
//! prints one JSON object, all times in seconds, best of REPS (default 1):
//! - `prefaulted_seconds`: `Relayout::run` into a 64-byte-aligned destination whose
//!   pages were all written beforehand — the library's use, converting into a buffer
//!   the caller owns;
//! - `fresh_thp_seconds`: the same into a destination mapped inside the timed region
//!   (advised MADV_HUGEPAGE, as numpy's arrays are) and unmapped before the clock stops,
//!   so it pays first-touch faults like a new numpy array;
//! - `memcpy_seconds`: a 1-thread `copy_from_slice` of the same bytes, pre-faulted.

use std::hint::black_box;
use std::time::Instant;
use tpusim_layout::{parse_array, Relayout};

#[path = "../benches/support/mod.rs"]
mod support;
use support::{aligned, fill_pattern, Anon};

fn secs(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// One line on stderr and exit code 2, as the CLI does for bad input.
fn fail(what: impl std::fmt::Display) -> ! {
    eprintln!("relayout_time: {what}");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 || args.len() > 3 {
        fail("usage: relayout_time FROM TO [REPS]");
    }
    let reps: usize = match args.get(2).map(|r| r.parse()) {
        None => 1,
        Some(Ok(n)) if n > 0 => n,
        _ => fail(format!("REPS '{}' is not a positive count", args[2])),
    };
    let shape = |s: &str| parse_array(s).unwrap_or_else(|e| fail(format!("'{s}': {e}")));
    let (from, to) = (shape(&args[0]), shape(&args[1]));
    let plan = Relayout::new(&from, &to).unwrap_or_else(|e| fail(e));
    let (ns, nd) = (plan.src_bytes() as usize, plan.dst_bytes() as usize);
    if ns == 0 || nd == 0 {
        fail("nothing to time: the array has no bytes");
    }
    let (mut sb, so) = aligned(ns);
    let src = &mut sb[so..so + ns];
    fill_pattern(src);
    let src: &[u8] = src;
    let (mut db, d_o) = aligned(nd);
    let dst = &mut db[d_o..d_o + nd];
    plan.run(src, dst).unwrap();
    let (mut pre, mut fresh, mut memcpy) = (f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..reps {
        pre = pre.min(secs(|| plan.run(black_box(src), dst).unwrap()));
        fresh = fresh.min(secs(|| {
            let mut d = Anon::new(nd, true);
            plan.run(black_box(src), d.as_mut()).unwrap();
        }));
        if ns == nd {
            memcpy = memcpy.min(secs(|| dst.copy_from_slice(black_box(src))));
        }
    }
    let json = serde_json::json!({
        "from": from.to_string(),
        "to": to.to_string(),
        "bytes": ns,
        "threads": rayon::current_num_threads(),
        "prefaulted_seconds": pre,
        "fresh_thp_seconds": fresh,
        "memcpy_seconds": if ns == nd { Some(memcpy) } else { None },
    });
    println!("{json}");
}
