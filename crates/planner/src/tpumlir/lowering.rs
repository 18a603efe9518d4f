//! The ops TPU-MLIR 1.30.2 lowers a graph to under a 16-bit quantization (F16/BF16), by
//! their loc names: one op for each of ours, plus the casts it inserts. An exported
//! cache must name these exactly: TPU-MLIR skips names it does not know without a word,
//! and a group that leaves out a cast lying between two of its ops does not compile
//! ("operand #0 does not dominate this use").
//!
//! The rules, read off TPU-MLIR's `*_tpu_opt.mlir` for the zoo of `bench/tpumlir_zoo.py`
//! on bm1684x and bm1688 (`tests/data/zoo/`):
//! - **Precision.** The chip's f32 ops ([`super::precision`]) run in f32: our graph
//!   holds them so, between explicit casts ([`crate::Preparation::f32_ops`]), and a
//!   global average pool runs in f32 too (implicitly: the cost model times it so).
//!   Reshape and Flatten run in their input's precision. Every other op runs in 16 bits.
//! - **Casts.** Where an op reads a tensor of another precision than its own, a cast is
//!   in front of it, named `<producer loc><reader loc>_<precision>`
//!   (`relu13_Relugap14_GlobalAveragePool_f32`, `sigmoid17_Sigmoidmul18_Mul_f16`), one
//!   per tensor, named after its first reader: our explicit `Cast` ops (the network input's, and those around f32
//!   ops; see [`super::op_loc`]), and the implicit one in front of a global average
//!   pool, which this adds unless the pool reads one of ours (a tensor an f32 op casts
//!   up too: the zoo's psp_pool_64's three f32 pools of one map share
//!   `relu12_Reluavgpool13_AveragePool_f32`, `tpusim_graph::cast::cast_wide_by`).
//! - **Outputs.** A network output computed in 16 bits is cast to f32 after its op:
//!   `<producer loc>_f32` (`fc18_Gemm_f32`).

use super::cache::{loc_name, op_loc};
use tpusim_graph::{Graph, Op, OpKind, TensorId};

/// The precision an op computes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Precision {
    /// The plan's 16-bit type.
    Sixteen,
    /// f32.
    F32,
}

/// One op TPU-MLIR makes of ours: our op's own loc and the casts that go with it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lowered {
    /// Casts in front of the op, one per input of another precision, in input order.
    pub casts_in: Vec<InputCast>,
    /// The op's own loc.
    pub loc: String,
    /// The cast of a 16-bit network output to f32 after the op.
    pub cast_out: Option<String>,
}

/// A cast TPU-MLIR puts in front of an op, for one of its inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputCast {
    /// Its loc.
    pub loc: String,
    /// Our op producing the input (`None` for a network input).
    pub producer: Option<usize>,
    /// Whether it casts to f32 (the reader runs in f32) rather than to 16 bits.
    pub to_f32: bool,
}

/// Each of `graph`'s ops as TPU-MLIR lowers it in a plan of `dtype`. Plans in other
/// than a 16-bit type get no implicit casts.
pub fn lower(graph: &Graph, dtype: &str) -> Vec<Lowered> {
    let sixteen = matches!(dtype, "f16" | "bf16");
    let producer = producers(graph);
    let mut precision: Vec<Precision> = Vec::with_capacity(graph.ops.len());
    let mut out = Vec::with_capacity(graph.ops.len());
    let mut cast_made = vec![false; graph.tensors.len()];
    for op in &graph.ops {
        let input_precision = |t: TensorId| match producer.get(t).copied().flatten() {
            // ops are in topological order: a producer's precision is known
            Some(p) => precision.get(p).copied().unwrap_or(Precision::Sixteen),
            None => Precision::Sixteen, // a network input read by anything but our input cast is 16-bit
        };
        let own = if crate::cost::is_view(op) {
            op.inputs
                .first()
                .map_or(Precision::Sixteen, |&t| input_precision(t))
        } else {
            own_precision(graph, op)
        };
        let loc = op_loc(graph, op, dtype);
        let mut lowered = Lowered {
            loc: loc.clone(),
            ..Lowered::default()
        };
        if sixteen && !matches!(op.kind, OpKind::Cast) {
            for &t in &op.inputs {
                if input_precision(t) == own || cast_made.get(t).copied().unwrap_or(true) {
                    continue;
                }
                cast_made[t] = true;
                let p = producer.get(t).copied().flatten();
                let from = p.map_or_else(
                    || {
                        graph
                            .tensors
                            .get(t)
                            .map_or(String::new(), |x| x.name.clone())
                    },
                    |p| loc_name(graph, &graph.ops[p]),
                );
                let to = if own == Precision::F32 { "f32" } else { dtype };
                lowered.casts_in.push(InputCast {
                    loc: format!("{from}{loc}_{to}"),
                    producer: p,
                    to_f32: own == Precision::F32,
                });
            }
            let is_output = op.outputs.iter().any(|t| graph.outputs.contains(t));
            if is_output && own == Precision::Sixteen {
                lowered.cast_out = Some(format!("{loc}_f32"));
            }
        }
        precision.push(own);
        out.push(lowered);
    }
    out
}

/// Whether TPU-MLIR computes tensor `t` of `graph` in f32 under a 16-bit plan (see
/// [`lower`]'s precision rules): the output of an op held in f32 (between casts, a cast
/// up) or of a global average pool, or a view of one. A network input is not.
pub fn computed_in_f32(graph: &Graph, t: TensorId) -> bool {
    match graph.ops.iter().find(|o| o.outputs.contains(&t)) {
        Some(p) if crate::cost::is_view(p) => {
            p.inputs.first().is_some_and(|&x| computed_in_f32(graph, x))
        }
        Some(p) => own_precision(graph, p) == Precision::F32,
        None => false,
    }
}

/// The precision of an op that is not a view: f32 if its output is held in f32 (an op
/// between casts, a cast up) or it is a global average pool.
fn own_precision(graph: &Graph, op: &Op) -> Precision {
    let wide_out = op
        .outputs
        .iter()
        .any(|&t| graph.tensors.get(t).and_then(|x| x.bits) == Some(32));
    if wide_out || matches!(op.kind, OpKind::GlobalAvgPool) {
        Precision::F32
    } else {
        Precision::Sixteen
    }
}

/// The op producing each tensor.
fn producers(graph: &Graph) -> Vec<Option<usize>> {
    let mut p = vec![None; graph.tensors.len()];
    for (i, op) in graph.ops.iter().enumerate() {
        for &t in &op.outputs {
            if let Some(slot) = p.get_mut(t) {
                *slot = Some(i);
            }
        }
    }
    p
}
