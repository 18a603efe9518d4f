//! The plan in words: what `tpusim plan` prints.

use crate::plan::{BlockKind, Plan};

/// The plan as `tpusim plan` prints it: a line on the network and chip, the input
/// casts, one row per group (ops, slicing, local-memory peak, GMEM bytes, cycles), the
/// groups that reload their weights, the global ops, and the totals against running
/// every op alone.
pub fn summary(p: &Plan) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let grouped: usize = p.groups.iter().map(|g| g.ops.len()).sum();
    let _ = writeln!(
        s,
        "{} on {} ({}, {} lanes x {} B, {} banks): {} in {}, {}",
        p.graph.name,
        p.chip,
        p.dtype,
        p.npu_num,
        p.lane_bytes,
        p.banks,
        count(grouped, "op"),
        count(p.groups.len(), "group"),
        count(p.global_ops.len(), "global op")
    );
    // casts of network inputs (the casts around ops run in f32 are counted below)
    let is_input = |t: &usize| p.graph.inputs.contains(t);
    let input_cast = |o: &&tpusim_graph::Op| {
        o.kind == tpusim_graph::OpKind::Cast && o.inputs.iter().any(is_input)
    };
    for op in p.graph.ops.iter().filter(input_cast) {
        let from = op
            .inputs
            .first()
            .and_then(|&t| p.graph.tensors.get(t))
            .and_then(|t| t.bits)
            .map_or(String::new(), |b| match b {
                32 => " from f32".to_string(),
                b => format!(" from {b}-bit"),
            });
        let wher = match p.groups.iter().position(|g| g.ops.contains(&op.name)) {
            Some(i) => format!("in group {i}"),
            None => "global".to_string(),
        };
        let _ = writeln!(
            s,
            "input cast: {}{from} to {} on the chip ({wher}; --input-dtype same if the input arrives as {})",
            op.name, p.dtype, p.dtype
        );
    }
    let is_cast = |o: &&tpusim_graph::Op| o.kind == tpusim_graph::OpKind::Cast;
    let wide_casts = p
        .graph
        .ops
        .iter()
        .filter(|o| is_cast(o) && !input_cast(o))
        .count();
    let wide_ops = p
        .graph
        .ops
        .iter()
        .filter(|o| !is_cast(o) && !crate::cost::is_view(o))
        .filter(|o| {
            o.outputs
                .iter()
                .any(|&t| p.graph.tensors.get(t).and_then(|x| x.bits) == Some(32))
        })
        .count();
    if wide_casts > 0 {
        let _ = writeln!(
            s,
            "f32 ops: {} in f32 under {}, as the chip's compiler runs them, with {} around them",
            count(wide_ops, "op"),
            p.dtype,
            count(wide_casts, "cast")
        );
    }
    let _ = writeln!(
        s,
        "{:>5} {:>4}  {:<44} {:>5} {:>5} {:>9} {:>10} {:>11}",
        "group", "ops", "first .. last", "nsecs", "hsecs", "lmem peak", "gmem", "cycles"
    );
    for (i, g) in p.groups.iter().enumerate() {
        let span = match g.ops.as_slice() {
            [one] => one.clone(),
            ops => format!(
                "{} .. {}",
                ops.first().map_or("", |x| x),
                ops.last().map_or("", |x| x)
            ),
        };
        let span = if span.chars().count() > 44 {
            format!("{}…", span.chars().take(43).collect::<String>())
        } else {
            span
        };
        let _ = writeln!(
            s,
            "{i:>5} {:>4}  {span:<44} {:>5} {:>5} {:>9} {:>10} {:>11}",
            g.ops.len(),
            g.nsecs,
            g.hsecs,
            g.lmem_peak,
            human_bytes(g.gmem_bytes),
            g.cycles
        );
    }
    let streamed: Vec<String> = p
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| {
            g.nsecs * g.hsecs > 1
                && g.blocks
                    .iter()
                    .any(|b| b.kind == BlockKind::Weight && b.end_ts.is_some())
        })
        .map(|(i, _)| i.to_string())
        .collect();
    if !streamed.is_empty() {
        let _ = writeln!(
            s,
            "weights reloaded in every slice (they do not all fit resident): group {}",
            streamed.join(", ")
        );
    }
    if !p.global_ops.is_empty() {
        let gc: u64 = p.global_costs.iter().map(|c| c.cycles).sum();
        let gb: u64 = p.global_costs.iter().map(|c| c.gmem_bytes).sum();
        let names: Vec<&str> = p.global_ops.iter().map(|x| x.as_str()).take(8).collect();
        let more = if p.global_ops.len() > 8 {
            format!(", … ({} more)", p.global_ops.len() - 8)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "global ops: {}{more}  ({}, {gc} cycles)",
            names.join(", "),
            human_bytes(gb)
        );
    }
    let ratio = |a: u64, b: u64| if a == 0 { 0.0 } else { b as f64 / a as f64 };
    let _ = writeln!(
        s,
        "GMEM traffic: {} (all-global {}, {:.2}x less)",
        human_bytes(p.gmem_bytes),
        human_bytes(p.gmem_bytes_all_global),
        ratio(p.gmem_bytes, p.gmem_bytes_all_global)
    );
    let _ = writeln!(
        s,
        "cycles: {} = {:.3} ms (all-global {} = {:.3} ms, {:.2}x faster)",
        p.cycles,
        p.seconds * 1e3,
        p.cycles_all_global,
        p.seconds_all_global * 1e3,
        ratio(p.cycles, p.cycles_all_global)
    );
    let _ = writeln!(s, "timing: {}", p.timing.source);
    s
}

/// `1 group`, `2 groups`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Bytes in SI units (`22.70 MB`, `51.2 kB`).
fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::summary;
    use crate::{plan, NpuChip, PlanOptions};

    #[test]
    fn the_summary_states_the_plans_own_figures() {
        for (graph, chip) in [
            (crate::testnets::conv_chain(1, 16, 56, 3), "bm1684x"),
            (crate::testnets::mini_resnet(2, 32, 28, 2), "cv183x"),
        ] {
            let chip = NpuChip::preset(chip).unwrap();
            let p = plan(&graph, &chip, &PlanOptions::default()).unwrap();
            let text = summary(&p);
            let lines: Vec<&str> = text.lines().collect();
            assert!(lines[0].starts_with(&format!("{} on {} (", p.graph.name, p.chip)));
            // one row per group, with its op count, slicing and cycles
            for (i, g) in p.groups.iter().enumerate() {
                let row = lines
                    .iter()
                    .find(|l| l.split_whitespace().next() == Some(&i.to_string()))
                    .unwrap_or_else(|| panic!("no row for group {i}:\n{text}"));
                let cells: Vec<&str> = row.split_whitespace().collect();
                assert_eq!(cells[1], g.ops.len().to_string(), "{row}");
                assert_eq!(cells.last(), Some(&g.cycles.to_string().as_str()), "{row}");
            }
            assert!(text.contains(&format!("cycles: {} = ", p.cycles)), "{text}");
            assert!(text.contains(&format!("all-global {} = ", p.cycles_all_global)));
            assert!(text.ends_with(&format!("timing: {}\n", p.timing.source)));
        }
    }
}
