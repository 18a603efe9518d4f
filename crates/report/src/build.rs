//! The pipeline: network → tensors in the chip's layouts → plan → per-layer and
//! whole-model timing → [`Report`].

use crate::error::{ReportError, Result};
use crate::machine::{parse_dtype, Machine};
use crate::model::CapacityReport;
use crate::model::{GroupReport, LayerReport, Report, TensorReport};
use crate::request::Request;
use crate::schedule::Scheduler;
use crate::storage::{picture, stored, Stored};
use crate::timing::Timer;
use tpusim_graph::{Graph, OpKind};
use tpusim_layout::ElementType;
use tpusim_planner::PlanOptions;

/// Make the report of one request.
pub fn report(req: &Request) -> Result<Report> {
    report_with_progress(req, &|_, _| {})
}

/// [`report`], telling `progress` (ops searched, ops in all) while the plan's group
/// search runs, the long part of a large network.
pub fn report_with_progress(
    req: &Request,
    progress: &tpusim_planner::Progress<'_>,
) -> Result<Report> {
    let machine = match &req.chip_file {
        Some(f) => Machine::from_toml(&f.text, &f.origin, req.vmem_bytes)?,
        None => Machine::lookup(&req.chip, req.vmem_bytes)?,
    };
    let dtype = match &req.dtype {
        Some(d) => parse_dtype(d)?,
        None => machine.default_dtype(),
    };
    let written = req.model.graph(req.batch, req.resolution)?;
    // planned as `tpusim plan` plans it: fused unless told not to, inputs cast on the
    // chip, TPU-MLIR's op order
    let how = tpusim_planner::Preparation {
        fuse: req.fuse,
        input_bits: input_bits(req.input_dtype.as_deref(), &machine, dtype)?,
        f32_ops: machine.planner_chip()?.f32_ops_at(dtype),
    };
    let graph = tpusim_planner::prepare(&written, how).map_err(|e| req.model.lower(e))?;
    let mut r = report_graph_with(
        &graph,
        req.model.name(),
        &machine,
        dtype,
        req.batch,
        progress,
    )?;
    if r.fits_hbm == Some(false) {
        crate::capacity::suggest(req, how, &machine, dtype, &mut r.capacity)?;
    }
    Ok(r)
}

/// Bits of the network inputs when they arrive wider or narrower than `dtype` (then a
/// cast op runs first), `None` when they arrive in `dtype`.
fn input_bits(given: Option<&str>, machine: &Machine, dtype: ElementType) -> Result<Option<u32>> {
    let npu = matches!(machine, Machine::Npu(_));
    let bits =
        match given {
            Some("same") => return Ok(None),
            None if npu => 32,
            None => return Ok(None),
            Some(t) if !npu => return Err(ReportError::BadInputDtype {
                given: t.into(),
                why: "TPUs take their inputs in the dtype (only NPUs cast f32 inputs on the chip)"
                    .into(),
            }),
            Some(t) => parse_dtype(t)
                .map_err(|_| ReportError::BadInputDtype {
                    given: t.into(),
                    why: "unknown element type (try f32, or same)".into(),
                })?
                .bits(),
        };
    Ok((bits != dtype.bits()).then_some(bits))
}

/// Cycles the search charges an op the report's timer cannot time (none it plans
/// should be): enough that no group holding it is chosen.
const UNTIMED_OP_CYCLES: f64 = 1e15;

fn is_view(kind: &OpKind) -> bool {
    matches!(kind, OpKind::Flatten | OpKind::Reshape)
}

fn add(a: u64, b: u64, what: &str) -> Result<u64> {
    a.checked_add(b)
        .ok_or_else(|| ReportError::Overflow(what.to_string()))
}

/// Make the report of a (fused) graph on a machine.
pub fn report_graph(
    graph: &Graph,
    model: &str,
    machine: &Machine,
    dtype: ElementType,
    batch: u64,
) -> Result<Report> {
    report_graph_with(graph, model, machine, dtype, batch, &|_, _| {})
}

/// Bytes moved per logical byte of each tensor as the machine stores it.
fn expansion_of(stored_all: &[Stored]) -> Vec<f64> {
    stored_all
        .iter()
        .map(|s| {
            if s.bytes_logical > 0 {
                s.bytes_moved as f64 / s.bytes_logical as f64
            } else {
                1.0
            }
        })
        .collect()
}

fn report_graph_with(
    graph: &Graph,
    model: &str,
    machine: &Machine,
    dtype: ElementType,
    batch: u64,
    progress: &tpusim_planner::Progress<'_>,
) -> Result<Report> {
    let bw = machine.offchip_bytes_per_s(dtype)?;
    let peak = machine.peak_flops_per_s(dtype)?;
    let vector = machine.vector_flops_per_s(dtype)?;
    let stored_all: Vec<Stored> = (0..graph.tensors.len())
        .map(|t| stored(machine, graph, t, dtype))
        .collect::<Result<_>>()?;
    let timer = Timer::new(graph, machine, dtype, expansion_of(&stored_all))?;
    let pchip = machine.planner_chip()?;
    let plan = plan_for(graph, model, machine, &pchip, dtype, &timer, progress)?;
    // the planner's own graph: an NPU's upsamples read index tables in their groups
    // (`tpusim_planner`'s upsample module), which the schedule times by name
    let (graph, stored_all, timer) = if plan.graph.tensors.len() == graph.tensors.len() {
        (graph, stored_all, timer)
    } else {
        let g = &plan.graph;
        let stored_all: Vec<Stored> = (0..g.tensors.len())
            .map(|t| stored(machine, g, t, dtype))
            .collect::<Result<_>>()?;
        let timer = Timer::new(g, machine, dtype, expansion_of(&stored_all))?;
        (g, stored_all, timer)
    };
    let mut alone = layers_alone(graph, &timer, &stored_all, bw)?;
    let ctx = Scheduler::new(graph, &stored_all, &timer, bw);
    let groups = group_reports(&plan, machine, &ctx, &mut alone.layers)?;
    let total_time_s: f64 = groups.iter().map(|g| g.time_s).sum();
    let compute_s: f64 = groups.iter().map(|g| g.compute_s).sum();
    let dma_s: f64 = groups.iter().map(|g| g.dma_s).sum();
    let exposed_dma_s: f64 = groups.iter().map(|g| g.exposed_dma_s).sum();
    let roof = roofline(graph, machine, dtype, peak, alone.macs, &stored_all, bw)?;

    // off-chip capacity
    let need = crate::capacity::needed(graph, &stored_all)?;
    let hbm_bytes_needed = need.total()?;
    let hbm_bytes = machine.offchip_capacity_bytes();
    let capacity = CapacityReport {
        hbm_bytes,
        weight_bytes: need.weights,
        peak_activation_bytes: need.peak_activations,
        peak_at_layer: need.peak_at,
        largest_batch_that_fits: None,
        chips_that_fit: vec![],
    };
    let tensors = tensor_reports(graph, &stored_all);
    let worst_layout = tensors.first().and_then(|w| {
        let t = ctx.tensors.get(w.name.as_str())?;
        Some(picture(&w.name, &stored_all[*t]))
    });
    let flops = alone.flops;
    Ok(Report {
        model: model.to_string(),
        chip: machine.name().to_string(),
        total_time_s,
        compute_s,
        dma_s,
        exposed_dma_s,
        roofline_lower_bound_s: roof.compute_s.max(roof.memory_s),
        roofline_compute_s: roof.compute_s,
        roofline_memory_s: roof.memory_s,
        flops,
        bytes_logical: alone.bytes_logical,
        bytes_moved: alone.bytes_moved,
        layers: alone.layers,
        groups,
        batch,
        dtype: dtype.name().to_string(),
        chip_kind: machine.kind().to_string(),
        peak_flops_per_s: peak,
        vector_flops_per_s: vector,
        offchip_bytes_per_s: bw,
        onchip_bytes: machine.onchip_bytes(),
        lane_bytes: pchip.geometry.lane_bytes,
        achieved_flops_per_s: if total_time_s > 0.0 {
            flops as f64 / total_time_s
        } else {
            0.0
        },
        fits_hbm: hbm_bytes.map(|cap| hbm_bytes_needed <= cap),
        hbm_bytes_needed,
        capacity,
        tensors,
        worst_layout,
    })
}

/// The plan of `graph` on the machine's planner chip. On a TPU the search times ops as
/// this report does (the systolic model on the MXUs, the VPU rate): with the planner's
/// NPU-style rate a batch cut into slices looked free, and ResNet-50 on v5p ran slower
/// per image at batch 8 than at 4.
fn plan_for(
    graph: &Graph,
    model: &str,
    machine: &Machine,
    pchip: &tpusim_planner::NpuChip,
    dtype: ElementType,
    timer: &Timer<'_>,
    progress: &tpusim_planner::Progress<'_>,
) -> Result<tpusim_planner::Plan> {
    let opts = PlanOptions {
        dtype,
        ..PlanOptions::default()
    };
    let tpu_clock = match machine {
        Machine::Tpu(t) => Some(t.clock_hz),
        Machine::Npu(_) => None,
    };
    // the search asks for the same few slices of each op many times: remember them
    let memo = std::sync::Mutex::new(std::collections::HashMap::new());
    let tpu_compute = |op: &tpusim_graph::Op, n: u64, h: u64| -> f64 {
        let key = (std::ptr::from_ref(op) as usize, n, h);
        if let Some(&c) = memo.lock().ok().as_ref().and_then(|m| m.get(&key)) {
            return c;
        }
        let clock = tpu_clock.unwrap_or(0.0);
        let c = timer
            .compute(op, n, h)
            .map_or(UNTIMED_OP_CYCLES, |c| c.seconds * clock);
        if let Ok(mut m) = memo.lock() {
            m.insert(key, c);
        }
        c
    };
    let hooks = tpusim_planner::Hooks {
        progress: Some(progress),
        compute: tpu_clock.map(|_| &tpu_compute as &tpusim_planner::ComputeModel<'_>),
    };
    tpusim_planner::plan_with(graph, pchip, &opts, hooks).map_err(|e| match e {
        tpusim_planner::PlanError::BadOption {
            name: "dtype",
            value,
            why,
        } => ReportError::BadDtype {
            given: value,
            why: why.to_string(),
        },
        source => ReportError::Plan {
            context: format!("planning '{model}' on {}", machine.name()),
            source,
        },
    })
}

/// Every layer timed alone (the larger of its compute and its memory), with the totals.
struct LayersAlone {
    layers: Vec<LayerReport>,
    flops: u64,
    macs: u64,
    bytes_logical: u64,
    bytes_moved: u64,
}

fn layers_alone(
    graph: &Graph,
    timer: &Timer<'_>,
    stored_all: &[Stored],
    bw: f64,
) -> Result<LayersAlone> {
    let mut layers = Vec::with_capacity(graph.ops.len());
    let (mut flops, mut macs, mut bytes_logical, mut bytes_moved) = (0u64, 0u64, 0u64, 0u64);
    for op in &graph.ops {
        let y = op.outputs.first().map(|&t| graph.tensors[t].shape);
        let c = match y {
            Some(s) => timer.compute(op, s.n, s.h)?,
            None => crate::timing::Compute {
                seconds: 0.0,
                macs: 0,
                flops: 0,
                utilization: 0.0,
            },
        };
        let (mut bl, mut bm) = (0u64, 0u64);
        if !is_view(&op.kind) {
            for &t in op.inputs.iter().chain(&op.weights).chain(&op.outputs) {
                bl = add(bl, stored_all[t].bytes_logical, "layer bytes")?;
                bm = add(bm, stored_all[t].bytes_moved, "layer bytes")?;
            }
        }
        let memory_s = bm as f64 / bw;
        let utilization = c.utilization;
        flops = add(flops, c.flops, "total FLOPs")?;
        macs = add(macs, c.macs, "total MACs")?;
        bytes_logical = add(bytes_logical, bl, "total logical bytes")?;
        bytes_moved = add(bytes_moved, bm, "total bytes moved")?;
        layers.push(LayerReport {
            name: op.name.clone(),
            op: op.kind.name().to_string(),
            flops: c.flops,
            bytes_logical: bl,
            bytes_moved: bm,
            compute_s: c.seconds,
            memory_s,
            bound: if c.seconds >= memory_s {
                "compute".into()
            } else {
                "memory".into()
            },
            group: 0,
            utilization,
        });
    }
    Ok(LayersAlone {
        layers,
        flops,
        macs,
        bytes_logical,
        bytes_moved,
    })
}

/// The groups in execution order: planner groups and global ops, by first op; each
/// layer learns its group. On an NPU their times are the plan's (the planner models the
/// NPU's DMA engine); on a TPU the schedule times the plan's steps with the MXU/VPU and
/// HBM models.
fn group_reports(
    plan: &tpusim_planner::Plan,
    machine: &Machine,
    ctx: &Scheduler<'_>,
    layers: &mut [LayerReport],
) -> Result<Vec<GroupReport>> {
    let npu_clock = matches!(machine, Machine::Npu(_)).then_some(plan.timing.clock_hz);
    let mut pieces: Vec<(usize, GroupReport)> = Vec::new();
    for gp in &plan.groups {
        let first = gp
            .ops
            .first()
            .and_then(|n| ctx.ops.get(n.as_str()).copied())
            .ok_or_else(|| ReportError::Lower {
                context: "reading the plan".into(),
                message: format!("group {:?} names an unknown op", gp.ops),
            })?;
        let mut g = ctx.group(gp)?;
        if let Some(clock) = npu_clock {
            // one answer for `plan` and `report`: the planner's own estimate
            g.set_times(
                gp.cycles as f64 / clock,
                gp.compute_cycles as f64 / clock,
                gp.dma_cycles as f64 / clock,
            );
        }
        pieces.push((first, g));
    }
    for (gi, name) in plan.global_ops.iter().enumerate() {
        let o = ctx
            .ops
            .get(name.as_str())
            .copied()
            .ok_or_else(|| ReportError::Lower {
                context: "reading the plan".into(),
                message: format!("global op '{name}' is not in the graph"),
            })?;
        let l = &layers[o];
        let (time_s, compute_s, dma_s) = match (npu_clock, plan.global_costs.get(gi)) {
            (Some(clock), Some(c)) => (
                c.cycles as f64 / clock,
                c.compute_cycles as f64 / clock,
                c.dma_cycles as f64 / clock,
            ),
            _ => (l.time_s(), l.compute_s, l.memory_s),
        };
        let mut g = GroupReport {
            ops: vec![name.clone()],
            time_s: 0.0,
            global: true,
            nsecs: 1,
            hsecs: 1,
            dma_s: 0.0,
            compute_s: 0.0,
            exposed_dma_s: 0.0,
            blocks: vec![],
        };
        g.set_times(time_s, compute_s, dma_s);
        pieces.push((o, g));
    }
    pieces.sort_by_key(|p| p.0);
    let groups: Vec<GroupReport> = pieces.into_iter().map(|p| p.1).collect();
    for (gi, g) in groups.iter().enumerate() {
        for name in &g.ops {
            if let Some(&o) = ctx.ops.get(name.as_str()) {
                layers[o].group = gi;
            }
        }
    }
    Ok(groups)
}

/// The roofline lower bound: all MACs at the best MAC rate, the compulsory bytes
/// (inputs, outputs and weights) once.
struct Roofline {
    compute_s: f64,
    memory_s: f64,
}

fn roofline(
    graph: &Graph,
    machine: &Machine,
    dtype: ElementType,
    peak: f64,
    macs: u64,
    stored_all: &[Stored],
    bw: f64,
) -> Result<Roofline> {
    let mac_rate = match machine {
        Machine::Npu(n) => {
            let t = crate::machine::npu_timing(&n.chip, dtype)?;
            2.0 * n.chip.geometry.npu_num as f64
                * t.used.clock_hz
                * t.used
                    .macs_per_cycle_per_lane
                    .max(t.eltwise_per_cycle_per_lane)
        }
        Machine::Tpu(_) => peak,
    };
    let mut compulsory = 0u64;
    let real_op = |t: usize, producer: bool| {
        graph.ops.iter().any(|o| {
            !is_view(&o.kind)
                && if producer {
                    o.outputs.contains(&t)
                } else {
                    o.inputs.contains(&t)
                }
        })
    };
    for &t in &graph.inputs {
        if real_op(t, false) {
            compulsory = add(compulsory, stored_all[t].bytes_logical, "compulsory bytes")?;
        }
    }
    for &t in &graph.outputs {
        if real_op(t, true) {
            compulsory = add(compulsory, stored_all[t].bytes_logical, "compulsory bytes")?;
        }
    }
    for (t, tensor) in graph.tensors.iter().enumerate() {
        if tensor.kind == tpusim_graph::TensorKind::Weight {
            compulsory = add(compulsory, stored_all[t].bytes_logical, "compulsory bytes")?;
        }
    }
    Ok(Roofline {
        compute_s: 2.0 * macs as f64 / mac_rate,
        memory_s: compulsory as f64 / bw,
    })
}

/// Every tensor's logical and stored bytes, worst padded first.
fn tensor_reports(graph: &Graph, stored_all: &[Stored]) -> Vec<TensorReport> {
    let mut tensors: Vec<TensorReport> = graph
        .tensors
        .iter()
        .zip(stored_all)
        .map(|(t, s)| TensorReport {
            name: t.name.clone(),
            shape: t.shape.to_string(),
            layout: s.layout.clone(),
            bytes_logical: s.bytes_logical,
            bytes_stored: s.bytes_stored,
        })
        .collect();
    tensors.sort_by(|a, b| {
        b.waste_bytes()
            .cmp(&a.waste_bytes())
            .then(a.name.cmp(&b.name))
    });
    tensors
}
