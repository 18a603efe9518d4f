//! TPU-MLIR's layer-group cache of a transformer graph, read back as a grouping of our
//! layers (`tpusim plan MODEL.onnx --import-tpu-mlir CACHE`), to price TPU-MLIR's own
//! choice with our model. The inverse of [`super::nd_export`]: a cache group names the
//! TPU-MLIR ops it holds (`locs`), each of our layers the ops it stands for
//! ([`super::nd_form::TxLayer::locs`]); a group becomes the run of our layers it names.
//! The views it lists (`reshape_49_0_Reshape`) are not layers of ours and are passed
//! over, and so are the transposes TPU-MLIR lists as global layers: whether one at a
//! group's edge joins it is `nd_plan::plan_nd_with_groups`'s choice.

use super::cache::Cache;
use super::nd_attention::view_nodes;
use super::nd_form::lower_on;
use crate::error::{PlanError, Result};
use crate::nd_plan::{plan_document, plan_nd_with_groups, NdGroupRequest, NdPlan};
use crate::NpuChip;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use tpusim_graph::nd::NdGraph;
use tpusim_layout::ElementType;

/// A cache's groups as runs of our layers.
#[derive(Debug, Clone, PartialEq)]
pub struct NdImported {
    /// One request per cache group, in the cache's order, each at its `shape_secs`.
    pub requests: Vec<NdGroupRequest>,
    /// Names the cache lists that are neither a layer of ours nor a view of the graph.
    pub unmatched: Vec<String>,
}

/// Read `cache`'s groups as runs of the layers `g` lowers to on `chip` in `dtype`. Errors
/// name a group that names no layer of ours, one whose layers are not consecutive, one
/// that shares a layer with another, a cut along D or W, and one along both C and H.
pub fn import_nd(
    g: &NdGraph,
    chip: &NpuChip,
    dtype: ElementType,
    cache: &Cache,
) -> Result<NdImported> {
    let layers = lower_on(g, chip, dtype);
    let layer_of: HashMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.locs.iter().map(move |loc| (loc.as_str(), i)))
        .collect();
    let views: HashSet<String> = view_nodes(g).map(|v| v.loc).collect();
    let mut requests = Vec::new();
    let mut unmatched = Vec::new();
    let mut taken: HashMap<usize, usize> = HashMap::new();
    for (k, group) in cache.group_layer.iter().enumerate() {
        let bad = |why: String| PlanError::BadFile {
            what: "TPU-MLIR cache JSON",
            why: format!(
                "group {k} ({}…): {why}",
                group.locs.first().map_or("", |s| s)
            ),
        };
        let mut members = Vec::new();
        for loc in &group.locs {
            match layer_of.get(loc.as_str()) {
                Some(&i) => members.push(i),
                None if views.contains(loc) => {}
                None => unmatched.push(loc.clone()),
            }
        }
        let (Some(&start), Some(&last)) = (members.iter().min(), members.iter().max()) else {
            return Err(bad("names no layer of this graph".into()));
        };
        let named: HashSet<usize> = members.iter().copied().collect();
        // a permute TPU-MLIR lists as global may lie between them: the group's load or
        // store runs it (`nd_plan`, the permutes fused into a group)
        if let Some(gap) =
            (start..=last).find(|&i| !named.contains(&i) && layers[i].op_type != "Permute")
        {
            return Err(bad(format!(
                "its layers are not consecutive here: {} ({}) lies between them",
                layers[gap].name, layers[gap].op_type
            )));
        }
        if let Some((&i, &other)) = named.iter().find_map(|i| taken.get_key_value(i)) {
            return Err(bad(format!("{} is in group {other} too", layers[i].name)));
        }
        taken.extend(named.iter().map(|&i| (i, k)));
        let secs = |at: usize| group.shape_secs.get(at).copied().unwrap_or(1);
        if let Some(at) = [2, 4].into_iter().find(|&at| secs(at) > 1) {
            return Err(bad(format!(
                "shape_secs {:?} cut along {}, which the transformer planner does not model (only N, C and H)",
                group.shape_secs,
                ["N", "C", "D", "H", "W"][at]
            )));
        }
        if secs(1) > 1 && secs(3) > 1 {
            return Err(bad(format!(
                "shape_secs {:?} cut along C and H, which the transformer planner does not model (N, and one of C and H)",
                group.shape_secs
            )));
        }
        let count = |at: usize| u64::try_from(secs(at)).unwrap_or(1).max(1);
        requests.push(NdGroupRequest {
            start,
            end: last + 1,
            nsecs: count(0),
            csecs: count(1),
            hsecs: count(3),
        });
    }
    Ok(NdImported {
        requests,
        unmatched,
    })
}

/// What our model says of a grouping read from TPU-MLIR's cache (the `tpu_mlir_import`
/// field of the plan's JSON document).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportReport {
    /// Groups in the cache.
    pub groups: usize,
    /// Runs of the plan (indices into its `groups`) that do not fit by our model: over
    /// the live-byte bound, or refused by our reproduction of TPU-MLIR's allocator.
    pub refused: Vec<usize>,
    /// Runs holding a layer our search never groups.
    pub ungroupable: Vec<usize>,
    /// Names in the cache that are neither a layer of ours nor a view of the graph.
    pub unmatched: Vec<String>,
}

/// `g` planned on `chip` in `dtype` with the grouping of TPU-MLIR's `cache`, and what
/// the model says of it (`tpusim plan MODEL.onnx --import-tpu-mlir CACHE`).
pub fn plan_imported(
    g: &NdGraph,
    chip: &NpuChip,
    dtype: ElementType,
    cache: &Cache,
) -> Result<(NdPlan, ImportReport)> {
    let imported = import_nd(g, chip, dtype, cache)?;
    let given = plan_nd_with_groups(g, chip, dtype, &imported.requests)?;
    let report = ImportReport {
        groups: cache.group_layer.len(),
        refused: given.refused,
        ungroupable: given.ungroupable,
        unmatched: imported.unmatched,
    };
    Ok((given.plan, report))
}

/// [`plan_document`] of an imported plan, with its [`ImportReport`] as `tpu_mlir_import`.
pub fn imported_document(g: &NdGraph, plan: &NdPlan, report: &ImportReport) -> serde_json::Value {
    let mut doc = plan_document(g, plan);
    doc["tpu_mlir_import"] = serde_json::json!(report);
    doc
}
