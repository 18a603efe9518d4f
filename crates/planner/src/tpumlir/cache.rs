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
use crate::plan::Plan;
use crate::timing::Timing;
use crate::GroupRequest;
use serde::{Deserialize, Serialize};
use tpusim_graph::Graph;

/// One `GroupLayer` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// Our plan's grouping as a TPU-MLIR cache (op indices are ours; `locs` carry the op
/// names TPU-MLIR matches on; `group_cost` our cycle estimate).
pub fn export(plan: &Plan) -> Cache {
    let idx = |name: &str| {
        plan.graph
            .ops
            .iter()
            .position(|o| o.name == name)
            .map_or(-1, |i| i as i64)
    };
    // pieces in op order
    let mut pieces: Vec<(i64, bool, usize)> = Vec::new();
    for (gi, g) in plan.groups.iter().enumerate() {
        pieces.push((idx(&g.ops[0]), true, gi));
    }
    for (ci, c) in plan.global_costs.iter().enumerate() {
        pieces.push((idx(&c.op), false, ci));
    }
    pieces.sort();
    let mut cache = Cache {
        opt: 2,
        group_layer: vec![],
        global_layer: vec![],
        cycle_prefix_sum: vec![],
    };
    // a view (flatten/reshape) run global right after a group's last op is listed in
    // that group where that pays under TPU-MLIR (see `trailing_view`)
    let absorbed: Vec<Option<usize>> = plan
        .groups
        .iter()
        .map(|g| trailing_view(plan, g.ops.last().map_or("", |s| s.as_str())))
        .collect();
    let mut sum = 0i64;
    for (index, &(start, is_group, i)) in pieces.iter().enumerate() {
        let index = index as i64;
        if !is_group && usize::try_from(start).is_ok_and(|s| absorbed.contains(&Some(s))) {
            continue;
        }
        let (end, cost) = if is_group {
            let g = &plan.groups[i];
            let mut locs = group_locs(&plan.graph, &g.ops, &plan.dtype);
            if let Some(v) = absorbed[i] {
                locs.extend(view_locs(&plan.graph, v, &plan.dtype));
            }
            let end = idx(g.ops.last().map_or("", |s| s.as_str()));
            cache.group_layer.push(CacheGroup {
                base_group_idx: 0,
                start_idx: start,
                end_idx: end,
                func_start_idx: start,
                func_end_idx: end,
                group_cost: g.cycles as i64,
                index,
                locs,
                shape_secs: vec![g.nsecs as i64, 1, 1, g.hsecs as i64, 1],
            });
            (end, g.cycles as i64)
        } else {
            let c = &plan.global_costs[i];
            cache.global_layer.push(CacheGlobal {
                index,
                func_idx: start,
                group_cost: c.cycles as i64,
                loc: usize::try_from(start)
                    .ok()
                    .and_then(|i| plan.graph.ops.get(i))
                    .map_or_else(|| c.op.clone(), |op| op_loc(&plan.graph, op, &plan.dtype)),
            });
            (start, c.cycles as i64)
        };
        sum = sum.saturating_add(cost);
        cache.cycle_prefix_sum.push(CachePrefix {
            index,
            prefix_end_idx: end,
            cycle_prefix_sum: sum,
        });
    }
    cache
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
fn onnx_type(op: &tpusim_graph::Op) -> &'static str {
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

/// TPU-MLIR's loc of `op` in a plan of `dtype`: [`loc_name`], except for the cast of
/// an f32 network input, which TPU-MLIR names `<input><consumer loc>_<dtype>`
/// (`inputrelu4_Relu_f16`).
pub fn op_loc(graph: &Graph, op: &tpusim_graph::Op, dtype: &str) -> String {
    if !matches!(op.kind, tpusim_graph::OpKind::Cast) {
        return loc_name(graph, op);
    }
    let input = op
        .inputs
        .first()
        .and_then(|&t| graph.tensors.get(t))
        .map_or(op.name.as_str(), |t| t.name.as_str());
    let consumer = op
        .outputs
        .first()
        .and_then(|&t| graph.ops.iter().find(|o| o.inputs.contains(&t)));
    let consumer = consumer.map(|c| loc_name(graph, c)).unwrap_or_default();
    format!("{input}{consumer}_{dtype}")
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

/// The view op run global right after op `last` that only `last` feeds (a flatten
/// between a pool and a gemm), if listing it in `last`'s group pays under TPU-MLIR.
///
/// In 16-bit plans TPU-MLIR runs a global average pool in f32 (a cast in front), so a
/// group ending in the pool stores the f32 output, and the view and a cast back to
/// 16 bits run global (about 650 cycles on bm1684x). Listed in the group, the cast
/// runs there and the group stores the 16-bit flattened tensor instead, which can be
/// slower: 1×1 planes pay the small-plane floor, which shrinks with the rows a
/// transfer needs (see [`crate::cost::small_plane_units`]). So the view goes in when
/// the 16-bit store costs no more than the f32 one (ResNet-18 and mini-MobileNetV2 at
/// batch 1, 512 and 256 channels: equal, 639 / 647 cycles saved), and stays global
/// otherwise (MobileNetV2's 1,280 channels: 31,985 vs 15,992 cycles of store;
/// ResNet-50's 2,048 and ResNet-18 at batch 4: 51,177 vs 25,588). After any other op
/// the view goes in at batch 1.
fn trailing_view(plan: &Plan, last: &str) -> Option<usize> {
    let g = &plan.graph;
    let op = g.ops.iter().find(|o| o.name == last)?;
    let out = *op.outputs.first()?;
    let mut users = g
        .ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.inputs.contains(&out));
    let (vi, v) = users.next()?;
    let shape = g.tensors.get(out)?.shape;
    let pays = if matches!(op.kind, tpusim_graph::OpKind::GlobalAvgPool)
        && matches!(plan.dtype.as_str(), "f16" | "bf16")
    {
        let t = Timing::from_used(&plan.timing, plan.eu_bytes, 16);
        crate::cost::pool_store_bits(&t, shape, 16) == 16
    } else {
        shape.n == 1
    };
    (users.next().is_none()
        && pays
        && crate::cost::is_view(v)
        && plan.global_ops.iter().any(|n| n == &v.name)
        && v.inputs.len() == 1)
        .then_some(vi)
}

/// TPU-MLIR's names for view op `v` inside a group: its loc, and in 16-bit models the
/// cast its lowering puts between the view and its consumer
/// (`<view loc><consumer loc>_f16`, e.g. `flat88_Flattenoutput_Gemm_f16`).
fn view_locs(graph: &Graph, v: usize, dtype: &str) -> Vec<String> {
    let Some(view) = graph.ops.get(v) else {
        return Vec::new();
    };
    let loc = loc_name(graph, view);
    let mut out = vec![loc.clone()];
    if matches!(dtype, "f16" | "bf16") {
        let consumer = view
            .outputs
            .first()
            .and_then(|&t| graph.ops.iter().find(|o| o.inputs.contains(&t)));
        if let Some(c) = consumer {
            out.push(format!("{loc}{}_{dtype}", loc_name(graph, c)));
        }
    }
    out
}

/// The `locs` of one exported group: each op's [`loc_name`], plus the f32 cast that
/// TPU-MLIR inserts in front of a global average pool in 16-bit models
/// (`<producer loc><pool loc>_f32`), which a group holding both must list or its
/// compiler rejects the group ("operand does not dominate this use").
fn group_locs(graph: &Graph, ops: &[String], dtype: &str) -> Vec<String> {
    let sixteen_bit = matches!(dtype, "f16" | "bf16");
    let mut locs = Vec::with_capacity(ops.len() + 1);
    for name in ops {
        let Some(op) = graph.ops.iter().find(|o| &o.name == name) else {
            locs.push(name.clone());
            continue;
        };
        let loc = op_loc(graph, op, dtype);
        if sixteen_bit && matches!(op.kind, tpusim_graph::OpKind::GlobalAvgPool) {
            // the cast in front goes with the pool, wherever its producer runs (TPU-MLIR's
            // own ResNet-18 b1 group: cast, pool, flatten, cast)
            let producer = op
                .inputs
                .first()
                .and_then(|&t| graph.ops.iter().find(|p| p.outputs.contains(&t)));
            if let Some(p) = producer {
                locs.push(format!("{}{loc}_f32", loc_name(graph, p)));
            }
        }
        locs.push(loc);
    }
    locs
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
            // an input cast: `<input><consumer loc>_<dtype>`, whatever the dtype
            let (stem, _) = loc.rsplit_once('_')?;
            graph.ops.iter().position(|o| {
                matches!(o.kind, tpusim_graph::OpKind::Cast)
                    && op_loc(graph, o, "").strip_suffix('_') == Some(stem)
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
