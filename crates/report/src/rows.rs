//! Table rows shared by the renderers ([`crate::terminal`], [`crate::html`]): the cells
//! of a layer or tensor, formatted once; each renderer only lays them out.

use crate::model::{LayerReport, TensorReport};
use crate::units::{bytes, percent, seconds, si};

/// A layer's full row: name, op, FLOPs, logical and moved bytes, compute and memory
/// time, bound, utilization, group.
pub(crate) fn layer_row(l: &LayerReport) -> Vec<String> {
    vec![
        l.name.clone(),
        l.op.clone(),
        si(l.flops as f64, "FLOP"),
        bytes(l.bytes_logical),
        bytes(l.bytes_moved),
        seconds(l.compute_s),
        seconds(l.memory_s),
        l.bound.clone(),
        percent(l.utilization),
        l.group.to_string(),
    ]
}

/// A row of the top-layers list: name, op, time alone, (with `split`: compute and
/// memory time), bound, utilization, group.
pub(crate) fn top_layer_row(l: &LayerReport, split: bool) -> Vec<String> {
    let mut row = vec![l.name.clone(), l.op.clone(), seconds(l.time_s())];
    if split {
        row.push(seconds(l.compute_s));
        row.push(seconds(l.memory_s));
    }
    row.extend([l.bound.clone(), percent(l.utilization), l.group.to_string()]);
    row
}

/// A row of the top-tensors list: name, (with `shape`: its shape), stored layout,
/// logical, stored and wasted bytes, expansion.
pub(crate) fn top_tensor_row(t: &TensorReport, shape: bool) -> Vec<String> {
    let mut row = vec![t.name.clone()];
    if shape {
        row.push(t.shape.clone());
    }
    row.extend([
        t.layout.clone(),
        bytes(t.bytes_logical),
        bytes(t.bytes_stored),
        bytes(t.waste_bytes()),
        format!("{:.2}x", t.expansion()),
    ]);
    row
}
