//! The cast after a global average pool. Under a 16-bit type TPU-MLIR 1.30.2 runs a
//! global average pool in f32 and writes its output in f32. A reader in 16 bits then
//! reads a cast of it. The export names that cast (`flatN_Flatten…_f16`). It runs as a
//! global layer whenever the pool's output leaves local memory in f32: after a global
//! pool, or after a group that stores the pool's output at 32 bits
//! ([`crate::cost::pool_store_bits`]). The zoo's compiled programs time it as any global
//! cast. On bm1688 twelve of the zoo's compiles have one before their classifiers; the
//! eight read (inception_b4, mobile_v1_b2, resnext_b4, …) take 599–717 cycles. On
//! bm1684x ceil_stem_57's [1, 32]
//! cast after its global pool takes 328. This module prices that cast as a global
//! [`OpKind::Cast`] ([`crate::cost::global_cost`]), so a plan's total counts it.

use crate::cost::global_cost;
use crate::timing::Timing;
use tpusim_graph::query::Uses;
use tpusim_graph::{Graph, Op, OpKind, Shape4, Tensor, TensorId, TensorKind};

/// Bits at which tensor `t` (of a `bits`-bit plan) moves between a layer group and the
/// next piece: 32 where a global average pool reads it right after the op that writes
/// it, as TPU-MLIR then casts it to f32 in the writer's group and moves the f32 map (the
/// export homes that cast there, `tpumlir::export`): small_cnn's 1×64×8×8 map before its
/// pool stores in 399 cycles on bm1684x as f32, where 16 bits would take 800 (its rows,
/// `cost::act_plane_cycles`). Else `bits`.
pub(crate) fn transfer_bits(graph: &Graph, uses: &Uses, t: TensorId, bits: u32) -> u32 {
    if bits >= 32 {
        return bits;
    }
    let Some(writer) = uses.producer.get(t).copied().flatten() else {
        return bits;
    };
    let pool_next = uses.consumers.get(t).is_some_and(|readers| {
        readers
            .iter()
            .any(|&o| o == writer + 1 && matches!(graph.ops[o].kind, OpKind::GlobalAvgPool))
    });
    if pool_next {
        32
    } else {
        bits
    }
}

/// Cycles of the global cast of `pool`'s output back to `bits`, if `pool` is a global
/// average pool in a type narrower than 32 bits and some op other than a cast reads its
/// output; else 0.
pub(crate) fn pool_output_cast_cycles(
    graph: &Graph,
    pool: &Op,
    bits: u32,
    geo: &tpusim_lmem::Chip,
    t: &Timing,
) -> u64 {
    if !matches!(pool.kind, OpKind::GlobalAvgPool) || bits >= 32 {
        return 0;
    }
    let Some(&out) = pool.outputs.first() else {
        return 0;
    };
    let read_narrow = graph
        .ops
        .iter()
        .any(|o| o.inputs.contains(&out) && !matches!(o.kind, OpKind::Cast));
    match graph.tensors.get(out) {
        Some(y) if read_narrow => cast_cycles(y.shape, bits, geo, t),
        _ => 0,
    }
}

/// A global cast of an f32 tensor of `shape` into `bits`.
fn cast_cycles(shape: Shape4, bits: u32, geo: &tpusim_lmem::Chip, t: &Timing) -> u64 {
    let tensor = |name: &str, bits: Option<u32>| Tensor {
        name: name.into(),
        shape,
        kind: TensorKind::Activation,
        bits,
    };
    let cast = Op {
        name: "pool_cast".into(),
        kind: OpKind::Cast,
        inputs: vec![0],
        weights: vec![],
        outputs: vec![1],
        fused_act: None,
        source_type: None,
    };
    let graph = Graph {
        name: "pool_cast".into(),
        tensors: vec![tensor("pool_f32", Some(32)), tensor("pool_cast", None)],
        ops: vec![cast],
        inputs: vec![0],
        outputs: vec![1],
    };
    global_cost(&graph, &graph.ops[0], bits, geo, t, None).cycles
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NpuChip;
    use tpusim_graph::GraphBuilder;
    use tpusim_layout::ElementType;

    /// A global average pool of `x` then a flatten and a fully connected layer.
    fn pool_then_fc(x: Shape4) -> Graph {
        let mut b = GraphBuilder::new("pool_fc");
        let i = b.input("x", x);
        let p = b.add_op("gap", OpKind::GlobalAvgPool, &[i], &[]).unwrap();
        let f = b.add_op("flat", OpKind::Flatten, &[p], &[]).unwrap();
        let y = b.gemm("fc", f, 10, true).unwrap();
        b.output(y);
        b.finish().unwrap()
    }

    /// The cast back after the pool, as TPU-MLIR 1.30.2 compiled it in the zoo: on
    /// bm1684x ceil_stem_57's [1, 32] f32 → f16 in 328 cycles, on bm1688 inception_b4's
    /// [4, 128] in 656.
    #[test]
    fn the_cast_after_a_global_pool_costs_what_the_zoo_compiled() {
        for (chip, x, compiled) in [
            ("bm1684x", Shape4::new(1, 32, 7, 7), 328.0),
            ("bm1688", Shape4::new(4, 128, 12, 12), 656.0),
        ] {
            let npu = NpuChip::preset(chip).unwrap();
            let t = npu.timing_at(ElementType::F16).unwrap();
            let g = pool_then_fc(x);
            let cast = pool_output_cast_cycles(&g, &g.ops[0], 16, &npu.geometry, &t);
            let r = cast as f64 / compiled;
            assert!((0.95..1.05).contains(&r), "{chip}: {cast} cycles ({r:.3}x)");
        }
    }

    /// No cast in f32 plans, none for an op that is not a global average pool, none when
    /// only casts read the output; the pool's global cost counts it.
    #[test]
    fn only_a_narrow_pool_read_by_a_narrow_op_pays_it() {
        let npu = NpuChip::preset("bm1684x").unwrap();
        let t = npu.timing_at(ElementType::F16).unwrap();
        let g = pool_then_fc(Shape4::new(1, 32, 7, 7));
        let geo = &npu.geometry;
        let cast = pool_output_cast_cycles(&g, &g.ops[0], 16, geo, &t);
        assert!(cast > 0);
        assert_eq!(pool_output_cast_cycles(&g, &g.ops[0], 32, geo, &t), 0);
        assert_eq!(pool_output_cast_cycles(&g, &g.ops[2], 16, geo, &t), 0);
        let mut only_cast = g.clone();
        only_cast.ops[1].kind = OpKind::Cast;
        assert_eq!(
            pool_output_cast_cycles(&only_cast, &only_cast.ops[0], 16, geo, &t),
            0
        );
        let with = global_cost(&g, &g.ops[0], 16, geo, &t, None).cycles;
        let without = global_cost(&only_cast, &only_cast.ops[0], 16, geo, &t, None).cycles;
        assert_eq!(with, without + cast);
    }
}
