//! TPU-MLIR interop: its layer-group cache JSON (`*.layer_group_cache.json`, read back
//! when `LOAD_TPU_GROUP=1` is set). Format (from TPU-MLIR's `dump_lg_results`):
//!
//! ```json
//! { "opt": 2,
//!   "GroupLayer": [ { "base_group_idx": 0, "start_idx": 0, "end_idx": 28,
//!                     "func_start_idx": 0, "func_end_idx": 28, "group_cost": 591722,
//!                     "index": 0, "locs": ["op names"...],
//!                     "shape_secs": [nsecs, csecs, dsecs, hsecs, wsecs] } ],
//!   "GlobalLayer": [ { "index": 1, "func_idx": 29, "group_cost": 100, "loc": "name" } ],
//!   "CyclePrefixSum": [ { "index": 0, "prefix_end_idx": 28, "cycle_prefix_sum": 591722 } ] }
//! ```
//!
//! Only groups of two or more TPU-MLIR ops are `GroupLayer`s (our global average pool
//! alone is one: TPU-MLIR's cast in front goes with it); `locs` are TPU-MLIR op location
//! names (ONNX output names after its own fusions). On import, a loc is matched to our
//! op of that name or whose output tensor has that name.

use crate::error::{PlanError, Result};
use crate::GroupRequest;
use serde::{Deserialize, Serialize};
use tpusim_graph::Graph;

/// One `GroupLayer` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheGroup {
    /// Base group (TPU-MLIR's pre-cut of the function); 0 here.
    #[serde(default)]
    pub base_group_idx: i64,
    /// First op index.
    #[serde(default)]
    pub start_idx: i64,
    /// Last op index.
    #[serde(default)]
    pub end_idx: i64,
    /// First op index in the function.
    #[serde(default)]
    pub func_start_idx: i64,
    /// Last op index in the function.
    #[serde(default)]
    pub func_end_idx: i64,
    /// Estimated cycles of the group.
    #[serde(default)]
    pub group_cost: i64,
    /// Position among all groups and global layers.
    #[serde(default)]
    pub index: i64,
    /// Op location names.
    #[serde(default)]
    pub locs: Vec<String>,
    /// `[nsecs, csecs, dsecs, hsecs, wsecs]`.
    #[serde(default)]
    pub shape_secs: Vec<i64>,
}

/// One `GlobalLayer` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheGlobal {
    /// Position among all groups and global layers.
    #[serde(default)]
    pub index: i64,
    /// Op index in the function.
    #[serde(default)]
    pub func_idx: i64,
    /// Estimated cycles.
    #[serde(default)]
    pub group_cost: i64,
    /// Op location name.
    #[serde(default)]
    pub loc: String,
}

/// One `CyclePrefixSum` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachePrefix {
    /// Position.
    pub index: i64,
    /// Last op index covered.
    pub prefix_end_idx: i64,
    /// Cycles so far.
    pub cycle_prefix_sum: i64,
}

/// The whole cache file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    /// TPU-MLIR's search option (`opt`): 2 = dynamic programming.
    pub opt: i64,
    /// Groups of two or more (TPU-MLIR) ops.
    #[serde(rename = "GroupLayer", default)]
    pub group_layer: Vec<CacheGroup>,
    /// Single ops.
    #[serde(rename = "GlobalLayer", default)]
    pub global_layer: Vec<CacheGlobal>,
    /// Running cycle totals.
    #[serde(rename = "CyclePrefixSum", default)]
    pub cycle_prefix_sum: Vec<CachePrefix>,
}

/// The cache file text TPU-MLIR 1.30 writes and reads: the groups of `cache` nested
/// under `subfunc_0` (`{"opt": 2, "total subfunc": 1, "subfunc_0": {"subfunc idx": 0,
/// "GroupLayer": …, "GlobalLayer": …, "CyclePrefixSum": …}}`), pretty-printed.
pub fn to_text(cache: &Cache) -> String {
    let v = serde_json::json!({
        "opt": cache.opt,
        "total subfunc": 1,
        "subfunc_0": {
            "subfunc idx": 0,
            "GroupLayer": cache.group_layer,
            "GlobalLayer": cache.global_layer,
            "CyclePrefixSum": cache.cycle_prefix_sum,
        }
    });
    let mut t = serde_json::to_string_pretty(&v).unwrap_or_default();
    t.push('\n');
    t
}

/// Parse a cache file's text: the flat form above, or TPU-MLIR 1.30's nested form
/// (`{"opt": 2, "total subfunc": 1, "subfunc_0": {"GroupLayer": …, "GlobalLayer": …}}`),
/// whose sub-functions are merged in order.
pub fn parse(text: &str) -> Result<Cache> {
    let bad = |why: String| PlanError::BadFile {
        what: "TPU-MLIR cache JSON",
        why,
    };
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| bad("the top level is not an object".into()))?;
    let opt = obj
        .get("opt")
        .and_then(|o| o.as_i64())
        .ok_or_else(|| bad("no integer 'opt' field".into()))?;
    let mut cache = Cache {
        opt,
        group_layer: vec![],
        global_layer: vec![],
        cycle_prefix_sum: vec![],
    };
    let mut parts: Vec<&serde_json::Map<String, serde_json::Value>> = vec![obj];
    let mut subs: Vec<(u64, &serde_json::Map<String, serde_json::Value>)> = obj
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("subfunc_")?.parse().ok()?, v.as_object()?)))
        .collect();
    subs.sort_by_key(|s| s.0);
    parts.extend(subs.into_iter().map(|s| s.1));
    for p in parts {
        let field = |name: &str| {
            p.get(name)
                .cloned()
                .unwrap_or(serde_json::Value::Array(vec![]))
        };
        let g: Vec<CacheGroup> = serde_json::from_value(field("GroupLayer"))
            .map_err(|e| bad(format!("GroupLayer: {e}")))?;
        let l: Vec<CacheGlobal> = serde_json::from_value(field("GlobalLayer"))
            .map_err(|e| bad(format!("GlobalLayer: {e}")))?;
        let c: Vec<CachePrefix> = serde_json::from_value(field("CyclePrefixSum"))
            .map_err(|e| bad(format!("CyclePrefixSum: {e}")))?;
        cache.group_layer.extend(g);
        cache.global_layer.extend(l);
        cache.cycle_prefix_sum.extend(c);
    }
    Ok(cache)
}

/// The ONNX op type TPU-MLIR puts in the name of the op that `op` becomes: the type of
/// the last ONNX node fused into it (a fused ReLU names the op `…_Relu`).
fn onnx_type(op: &tpusim_graph::Op) -> &str {
    use tpusim_graph::{Activation as A, OpKind as K};
    let act = |a: A| match a {
        A::Relu => "Relu",
        A::Relu6 => "Clip",
        A::LeakyRelu => "LeakyRelu",
        A::Sigmoid => "Sigmoid",
        A::Tanh => "Tanh",
        A::HardSigmoid => "HardSigmoid",
        A::HardSwish => "HardSwish",
        A::Silu => "Silu",
        A::Gelu => "Gelu",
    };
    if let Some(a) = op.fused_act {
        return act(a);
    }
    if let Some(t) = &op.source_type {
        return t;
    }
    match &op.kind {
        K::Conv(_) => "Conv",
        K::Deconv { .. } => "ConvTranspose",
        K::MaxPool(_) => "MaxPool",
        K::AvgPool(_) => "AveragePool",
        K::GlobalAvgPool => "GlobalAveragePool",
        K::GlobalMaxPool => "GlobalMaxPool",
        K::BatchNorm => "BatchNormalization",
        K::Act(a) => act(*a),
        K::Add => "Add",
        K::Mul => "Mul",
        K::Concat => "Concat",
        K::Upsample { .. } => "Resize",
        K::Gemm => "Gemm",
        K::Flatten => "Flatten",
        K::Reshape => "Reshape",
        K::Cast => "Cast",
    }
}

/// TPU-MLIR's loc of `op` in a plan of `dtype`: [`loc_name`], except for a cast, which
/// TPU-MLIR names `<input><consumer loc>_<type>`: the input is a network input's name
/// (`inputrelu4_Relu_f16`) or its producer's loc (`conv16_Convsigmoid17_Sigmoid_f32`),
/// the type `f32` for a cast up to f32, else `dtype`.
pub fn op_loc(graph: &Graph, op: &tpusim_graph::Op, dtype: &str) -> String {
    if !matches!(op.kind, tpusim_graph::OpKind::Cast) {
        return loc_name(graph, op);
    }
    let producer = op
        .inputs
        .first()
        .and_then(|&t| graph.ops.iter().find(|p| p.outputs.contains(&t)));
    let input = match producer {
        Some(p) => loc_name(graph, p),
        None => op
            .inputs
            .first()
            .and_then(|&t| graph.tensors.get(t))
            .map_or_else(|| op.name.clone(), |t| t.name.clone()),
    };
    let wide = op
        .outputs
        .first()
        .and_then(|&t| graph.tensors.get(t))
        .and_then(|t| t.bits)
        == Some(32);
    let dtype = if wide { "f32" } else { dtype };
    let consumer = first_reader(graph, op).map_or_else(String::new, |c| loc_name(graph, c));
    format!("{input}{consumer}_{dtype}")
}

/// The reader a cast `op` is named after: the first of the ops reading its output in
/// the network's own order, its ops' output tensors' (made as the file lists the ops;
/// our plan order, TPU-MLIR's topological one, may run another reader first: the zoo's
/// psp_pool_64 runs its global pool's branch before the 4×4 average pool TPU-MLIR names
/// the shared cast after).
fn first_reader<'g>(graph: &'g Graph, op: &tpusim_graph::Op) -> Option<&'g tpusim_graph::Op> {
    let out = op.outputs.first()?;
    graph
        .ops
        .iter()
        .filter(|o| o.inputs.contains(out))
        .min_by_key(|o| o.outputs.first().copied().unwrap_or(usize::MAX))
}

/// TPU-MLIR's loc name of the op `op` becomes: `<ONNX output name>_<ONNX op type>`
/// (e.g. `relu4_Relu` for a conv with its ReLU fused, `conv12_Conv`). TPU-MLIR skips
/// cache names it does not know without a word, so exported names must be these.
/// Known gap: a batch-norm folded into a conv without an activation after it is named
/// `…_BatchNormalization` by TPU-MLIR; our IR does not record the fold, so such an op
/// is exported as `…_Conv` (torch's ONNX export folds BN itself, so this is rare).
pub fn loc_name(graph: &Graph, op: &tpusim_graph::Op) -> String {
    let out = op
        .outputs
        .first()
        .and_then(|&t| graph.tensors.get(t))
        .map_or(op.name.as_str(), |t| t.name.as_str());
    format!("{out}_{}", onnx_type(op))
}

/// Our op for a TPU-MLIR loc name: an op of that name, or the op producing a tensor of
/// that name; failing both, the same with a trailing `_<OpType>` removed (TPU-MLIR
/// names ops `<onnx output>_<onnx op type>`, e.g. `relu4_Relu`, `conv12_Conv`).
pub fn match_loc(graph: &Graph, loc: &str) -> Option<usize> {
    let find = |name: &str| {
        graph.ops.iter().position(|o| o.name == name).or_else(|| {
            graph.ops.iter().position(|o| {
                o.outputs
                    .iter()
                    .any(|&t| graph.tensors.get(t).is_some_and(|x| x.name == name))
            })
        })
    };
    find(loc)
        .or_else(|| loc.rsplit_once('_').and_then(|(stem, _)| find(stem)))
        .or_else(|| {
            // a cast: `<input><consumer loc>_<type>`, whatever the type
            let (stem, _) = loc.rsplit_once('_')?;
            graph.ops.iter().position(|o| {
                matches!(o.kind, tpusim_graph::OpKind::Cast)
                    && op_loc(graph, o, "").rsplit_once('_').map(|s| s.0) == Some(stem)
            })
        })
}

/// What an import made of a cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// Our groups, in op order.
    pub requests: Vec<GroupRequest>,
    /// Locs that match none of our ops or tensors (TPU-MLIR's own inserted ops, such as
    /// casts), skipped.
    pub unmatched: Vec<String>,
    /// Our ops inside a TPU-MLIR group that we run from global memory (gemm, flatten,
    /// reshape): the group is split around them.
    pub split_at: Vec<String>,
    /// Ops that start a new group because the run before them reached
    /// [`crate::options::MAX_GROUP_OPS`] ops.
    pub cut_at: Vec<String>,
}

/// The groups of a cache as requests on `graph`. Each group's locs are mapped to our
/// ops (by op name, then by output tensor name); the group covers our ops from the
/// first to the last matched one (a group is a consecutive run), split around ops we
/// cannot place in local memory; runs of one op stay global. `shape_secs` gives the
/// slicing to try first when the group maps whole.
pub fn import(graph: &Graph, cache: &Cache) -> Result<Imported> {
    let mut out = Imported {
        requests: vec![],
        unmatched: vec![],
        split_at: vec![],
        cut_at: vec![],
    };
    let mut taken = vec![false; graph.ops.len()];
    for g in &cache.group_layer {
        let mut ids = Vec::new();
        for loc in &g.locs {
            match match_loc(graph, loc) {
                Some(i) => ids.push(i),
                None => out.unmatched.push(loc.clone()),
            }
        }
        let (Some(&first), Some(&last)) = (ids.iter().min(), ids.iter().max()) else {
            continue;
        };
        let secs = match g.shape_secs.as_slice() {
            [n, _c, _d, h, _w] if *n >= 1 && *h >= 1 => Some((*n as u64, *h as u64)),
            _ => None,
        };
        let mut run_start: Option<usize> = None;
        let mut runs = Vec::new();
        #[allow(clippy::needless_range_loop)]
        for o in first..=last + 1 {
            let ok = o <= last && !taken[o] && crate::group::groupable(&graph.ops[o].kind);
            if o <= last && !ok {
                out.split_at.push(graph.ops[o].name.clone());
            }
            match (ok, run_start) {
                (true, None) => run_start = Some(o),
                (false, Some(s)) => {
                    runs.push((s, o - 1));
                    run_start = None;
                }
                _ => {}
            }
        }
        // runs longer than a group may be are cut into consecutive pieces
        let max = crate::options::MAX_GROUP_OPS;
        let runs: Vec<(usize, usize)> = runs
            .into_iter()
            .flat_map(|(a, b)| (a..=b).step_by(max).map(move |s| (s, (s + max - 1).min(b))))
            .collect();
        for w in runs.windows(2) {
            if w[1].0 == w[0].1 + 1 {
                out.cut_at.push(graph.ops[w[1].0].name.clone());
            }
        }
        // one run from the first op to the last, or up to a trailing view that our
        // export lists in the group too (a flatten after a pool): TPU-MLIR's slicing
        let whole = runs.len() == 1
            && runs[0].0 == first
            && (runs[0].1 + 1..=last).all(|o| crate::cost::is_view(&graph.ops[o]));
        for (a, b) in runs {
            for t in taken.iter_mut().take(b + 1).skip(a) {
                *t = true;
            }
            // one op: a group only where TPU-MLIR's holds more of its own ops (a global
            // average pool between its casts; see `group::groups_alone`)
            let lone_pool = a == b
                && g.locs.len() > 1
                && matches!(graph.ops[a].kind, tpusim_graph::OpKind::GlobalAvgPool);
            if b > a || lone_pool {
                out.requests.push(GroupRequest {
                    first: a,
                    last: b,
                    secs: if whole { secs } else { None },
                });
            }
        }
    }
    if out.requests.is_empty() && !cache.group_layer.is_empty() {
        return Err(PlanError::BadFile {
            what: "TPU-MLIR cache JSON",
            why: format!(
                "none of its groups maps onto a group of '{}' (unmatched locs: {})",
                graph.name,
                out.unmatched
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    out.requests.sort_by_key(|r| r.first);
    Ok(out)
}
