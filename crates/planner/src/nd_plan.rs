//! Layer groups of a transformer graph (`tpusim_graph::nd`) on an NPU: runs of
//! consecutive layers of its TPU-MLIR form (`tpumlir::nd_form`) that keep the tensors
//! passed between them in local memory, so only what enters a group is loaded and only
//! what leaves it is stored. A dynamic program over the layers picks the runs. A group
//! holds its values whole where they fit a lane (as TPU-MLIR 1.30.2 holds all but one
//! of the transformer zoo's groups on bm1684x), else it is cut along the sequence: in C
//! slices of [b, s, d] values or in H slices of [b, heads, s, s] scores (TPU-MLIR cuts
//! llama_d320_s256's scaled and masked scores in 4 H slices), a matmul's weights
//! resident whole. Cut, every value is held at once, one slice's room each; and a group
//! is admitted only where TPU-MLIR's own time steps and allocator, reproduced
//! (`tpumlir::nd_place`), find it room. A cache may also cut a group along the batch
//! (N), alone or with C or H in each N slice, as TPU-MLIR cuts (gpt2_d208_s72_b6's
//! attention block on bm1688 in 6 N slices, llama_d512_s96_b3's in 3 N × 2 C): such
//! groups are priced and exported, but not searched (`Ctx::group_within`).
//!
//! In local memory a value is laid out as TPU-MLIR lays it (its `getNCHW`): [a, b] as
//! a×b planes of one element (N = a, C = b), [a, b, c] as N = a, C = b, H = c, higher ranks
//! folding into W, a matmul's weight [K, N] as C = K planes of N. Channels go over the
//! lanes, each plane's row aligned to EU_BYTES. So a 2-D [128, 512] f16 value takes 64 KiB
//! of every lane and its load pays 65,536 planes' floor: TPU-MLIR's own load of one in a
//! group takes 310,593 cycles (the floor model: 310,640), where a global layer moves the
//! same bytes flat in 2,427. Grouping such values is what the model must refuse to want.
//! A group TPU-MLIR makes `GROUP_SMALL_C` (activations, casts and scalar multiplies of
//! 4-D scores, `small_c`) holds each value's rows over the lanes instead.
//!
//! A group's time: its loads and stores (each a transfer of its planes, at the chip's
//! rates and per-plane floors, `cost::act_dma_cycles`) and its layers' compute
//! (element-wise work EU_NUM positions a lane a cycle over that layout). Held whole, a
//! group runs in TPU-MLIR's time steps (`tpumlir::nd_place::one_loop_cycles`): its
//! transfers placed as TPU-MLIR places them (nearest assignment, software pipelining,
//! moves by cycle slack, then its time-step combine, `tpumlir::combine`), each step
//! taking the longer of its compute and its transfers, as TPU-MLIR syncs both engines at
//! every step. gpt2_d768_s64's last group on bm1684x spans 254,503 cycles compiled: each
//! 2.4 MB weight loads beside the matmul before its reader, and the transfers run back
//! to back (the rule before) said 230,855; the steps say 252,138. Cut in slices, one
//! slice's transfers overlap another's compute, but for the first slice's loads (with the
//! weights the group holds) and the last one's stores ([`sliced_group_cycles`]).
//!
//! What may join a group: weight matmuls and the attention's matmuls TPU-MLIR runs with
//! the heads as a batch (`tpumlir::nd_attention`), element-wise and normalising work
//! (softmax included), casts, slices, splits and concats, and permutes, each fused into
//! the group's load or its store (`Ctx::permutes_at_edges`). Gathers (the embedding),
//! other transposes, expands, tiles and the other attention matmuls stay global:
//! TPU-MLIR 1.30.2 runs every one of them as a global layer in the zoo.

use crate::cost::{act_dma_cycles, Dir};
use crate::error::{PlanError, Result};
use crate::nd_global::{function_ops, layer_cost, LocalMemory, NdLayer};
use crate::timing::Timing;
use crate::tpumlir::alloc::{BufKind, Lane};
use crate::tpumlir::calib::Calibration;
use crate::tpumlir::nd_attention::{group_views, GroupView};
use crate::tpumlir::nd_buffers::{buffer_bytes, BufferKind, Lanes, Operand};
use crate::tpumlir::nd_form::{lower_on, TxLayer, TxValue};
use crate::tpumlir::nd_place::{allocates, one_loop_cycles, one_loop_floor, GroupBuf, GroupOp};
use crate::NpuChip;
use serde::Serialize;
use std::cell::RefCell;
// FxHash, not SipHash: the group caches hash whole group models, thousands a plan
// (SipHash was 9 % of planning bert_tiny); a crafted collision could only slow a plan
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tpusim_graph::nd::{NdGraph, Work};
use tpusim_graph::Shape4;
use tpusim_layout::ElementType;

mod branches;
mod given;
pub mod group_matmul;
pub mod local_softmax;
mod small_c;
pub use given::{plan_nd_with_groups, NdGivenPlan, NdGroupRequest};

/// Most layers a group may hold. TPU-MLIR bounds its groups by local memory alone, so
/// this only bounds our search: its own group of bert_d384_s128 on bm1684x, two
/// attentions fused into six heads each, holds 45 of our layers (32, the bound before,
/// left our plan 3.8 % slower than it compiled); held-out bert_d352_s96_b3's, eleven
/// heads each, holds the whole network, 66 (64, the bound before, left our plan 2.9 %
/// slower). The dynamic program is quadratic in this, but stops reaching back at the
/// first run that fits no slicing.
pub const MAX_ND_GROUP_LAYERS: usize = 128;

/// A run of layers: one global layer, or a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdGroup {
    /// First layer (index into the plan's layers).
    pub start: usize,
    /// One past the last layer.
    pub end: usize,
    /// Slices along N (the group's values' first dim: the batch).
    pub nsecs: u64,
    /// Slices along C (the group's values' second NCHW dim: the sequence of [b, s, d]).
    pub csecs: u64,
    /// Slices along H (the third: the query rows of attention scores [b, heads, s, s]).
    pub hsecs: u64,
    /// Bytes a lane holds at the group's peak: the values live across a member (from
    /// its writer or first reader to its last reader, one slice of each cut value; a
    /// weight a cut group holds, throughout) and its own buffers (0 for a global
    /// layer). A bound from below: TPU-MLIR's allocator needs more where loads move
    /// early, lifetimes wrap and banks clash.
    pub lane_bytes: u64,
    /// Bytes loaded from global memory.
    pub load_bytes: u64,
    /// Bytes stored to global memory.
    pub store_bytes: u64,
    /// Compute cycles.
    pub compute_cycles: u64,
    /// Transfer cycles.
    pub dma_cycles: u64,
    /// Cycles.
    pub cycles: u64,
}

/// A transformer graph planned in layer groups on an NPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdPlan {
    /// The chip.
    pub chip: String,
    /// Bits of activations and weights.
    pub dtype_bits: u32,
    /// The chip's clock, Hz.
    pub clock_hz: f64,
    /// Local memory of one lane, bytes.
    pub lane_bytes: u64,
    /// The layers, each as it runs alone (global).
    pub layers: Vec<NdLayer>,
    /// The runs, in order, covering every layer once.
    pub groups: Vec<NdGroup>,
    /// Cycles of every run, one after another.
    pub cycles: u64,
    /// Cycles with every layer global (no groups).
    pub ungrouped_cycles: u64,
    /// `cycles` at the chip's clock.
    pub seconds: f64,
}

/// What a plan is made against: the graph's layers, who reads each value, and the chip.
struct Ctx<'a> {
    layers: &'a [TxLayer],
    /// The graph's views: output → (what it views, flat).
    views: std::collections::HashMap<String, (String, bool)>,
    /// Views run in a group (not flat): output → the view.
    view_of: HashMap<String, GroupView>,
    /// Views run in a group: input → their outputs.
    views_from: HashMap<String, Vec<TxValue>>,
    costs: Vec<crate::GlobalOpCost>,
    readers: HashMap<&'a str, Vec<usize>>,
    /// A value only views read, by name: the view a layer reading it reads in a group
    /// (TPU-MLIR's matmul reads Q's `tpu.Reshape`, not the split it views).
    read_through: HashMap<String, TxValue>,
    /// The inverse of `read_through`: a view's name → the value it views.
    read_via: HashMap<String, String>,
    t: Timing,
    bits: u32,
    lanes: u64,
    eu_bytes: u64,
    lane_bytes: u64,
    bank_bytes: u64,
    /// What TPU-MLIR's allocator said of each group model already tried.
    allocated: RefCell<HashMap<AllocKey, bool>>,
    /// How TPU-MLIR estimates the chip's transfers.
    calib: Calibration,
    /// Every value some node of the graph reads (views included).
    read_in_graph: HashSet<String>,
    /// Outputs of the graph's transposes that no layer of the form writes (folded by
    /// `tpumlir::nd_attention`), by name: TPU-MLIR moves them by permuting the transfer
    /// of what they transpose.
    folded_transposes: HashMap<String, TxValue>,
    /// Cycles of each unsliced group model already timed.
    timed: RefCell<HashMap<AllocKey, f64>>,
    /// Cycles of each cut group model already timed, by its slices.
    pipelined: RefCell<HashMap<(AllocKey, SliceCount), f64>>,
}

/// A group that fits, for a caller that wants one faster than some budget.
enum Candidate {
    /// The group, timed.
    Timed(NdGroup),
    /// Held whole, its compute or its transfers alone take the budget or longer: not
    /// timed.
    Slower,
}

impl Candidate {
    /// The group, for a caller whose budget was `u64::MAX`: every group is timed then
    /// (its floor is an `i64`, below any such budget).
    fn timed(self) -> NdGroup {
        match self {
            Candidate::Timed(g) => g,
            Candidate::Slower => unreachable!("no group's floor reaches u64::MAX cycles"),
        }
    }
}

/// Which of a group's values [`Ctx::group_model`] stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stores {
    /// For the allocation check, from above: every value read outside the group and
    /// every view no layer reads (each a possible graph output).
    Bound,
    /// For the timing, the transfers TPU-MLIR runs: a view is stored only when nothing
    /// in the graph reads it (a graph output); the value it views is stored when read
    /// outside, once (TPU-MLIR's own group of gpt2_d256_s64_b2's Q·Kᵀ stores V's view and
    /// the scores, where every view of Q, K and V stored would add three transfers).
    Moved,
}

/// A group as its allocation sees it: buffers, ops, and whether it is cut.
type AllocKey = (Vec<GroupBuf>, Vec<GroupOp>, bool);

/// A cut group's slices as its pipelined timing depends on them: how many, and how many
/// along N (where they may differ in size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct SliceCount {
    total: u64,
    nsecs: u64,
}

impl<'a> Ctx<'a> {
    fn new(
        g: &NdGraph,
        layers: &'a [TxLayer],
        chip: &NpuChip,
        dtype: ElementType,
    ) -> Result<Ctx<'a>> {
        // a group's small planes move in the chip's rows (`cost::act_plane_cycles`), as
        // on CNN maps: bm1684x's group of gpt2_d64_s64's Add and LayerNorm loads each
        // [1, 64, 64] operand in 606 cycles, 64 planes of 128 bytes in two rows of 4,096
        // at four times the floor (the plain floor said 303); with them, and permutes
        // beside groups fused (`Ctx::fuses_beside`), TPU-MLIR's own groups of the zoo are
        // priced within 5 % in 358 of 425 (335 without). (They had been set aside before,
        // when bm1684x's zoo compiled slower with them, llama_d128_s64 at 1.140 of
        // TPU-MLIR's own, in a model whose norms and small global layers were mispriced.)
        let t = chip.timing_at(dtype)?;
        let bits = dtype.bits();
        let lanes = chip.geometry.npu_num.max(1);
        let lmem = LocalMemory::of(&chip.geometry);
        let views = crate::tpumlir::nd_attention::view_edges(g);
        let folded_transposes = folded_transposes(g, layers);
        let costs = layers
            .iter()
            .map(|l| {
                let permuted = l
                    .reads
                    .iter()
                    .filter_map(|v| folded_transposes.get(view_root(&views, &v.name)));
                with_global_permutes(layer_cost(l, bits, &lmem, &t), permuted, bits, &t)
            })
            .collect();
        let mut view_of = HashMap::default();
        let mut views_from: HashMap<String, Vec<TxValue>> = HashMap::default();
        for v in group_views(g) {
            views_from
                .entry(v.input.name.clone())
                .or_default()
                .push(v.output.clone());
            view_of.insert(v.output.name.clone(), v);
        }
        let mut readers: HashMap<&str, Vec<usize>> = HashMap::default();
        for (i, l) in layers.iter().enumerate() {
            for v in &l.reads {
                readers.entry(v.name.as_str()).or_default().push(i);
            }
        }
        let read_through = read_through_views(g, &views_from);
        let read_via = read_through
            .iter()
            .map(|(v, w)| (w.name.clone(), v.clone()))
            .collect();
        Ok(Ctx {
            layers,
            read_through,
            read_via,
            views,
            view_of,
            views_from,
            costs,
            readers,
            t,
            bits,
            lanes,
            eu_bytes: chip.geometry.eu_bytes.max(1),
            lane_bytes: chip.geometry.lane_bytes,
            bank_bytes: chip.geometry.bank_bytes(),
            allocated: RefCell::new(HashMap::default()),
            timed: RefCell::new(HashMap::default()),
            pipelined: RefCell::new(HashMap::default()),
            calib: Calibration::of(&chip.tpu_mlir, &chip.timing),
            read_in_graph: g
                .nodes
                .iter()
                .flat_map(|n| n.inputs.iter().map(|e| e.name.clone()))
                .collect(),
            folded_transposes,
        })
    }

    /// A lane as TPU-MLIR's allocator sees it.
    fn lane(&self) -> Lane {
        Lane {
            bytes: self.lane_bytes,
            align: self.eu_bytes,
            bank: self.bank_bytes,
        }
    }

    fn bits_of(&self, v: &TxValue) -> u32 {
        if v.wide {
            self.bits.max(32)
        } else {
            self.bits
        }
    }

    fn value_bytes(&self, v: &TxValue) -> u64 {
        (v.elements() * f64::from(self.bits_of(v)) / 8.0).ceil() as u64
    }

    /// Bytes one lane holds of a value of NCHW shape `s` and `bits`-bit elements: N ×
    /// its share of the C planes, each plane's H·W elements aligned to the chip's
    /// EU_BYTES.
    fn lane_bytes_in(&self, s: Shape4, bits: u32) -> u64 {
        let plane = (s.h.saturating_mul(s.w).saturating_mul(u64::from(bits)) / 8).max(1);
        s.n.saturating_mul(s.c.div_ceil(self.lanes))
            .saturating_mul(plane.div_ceil(self.eu_bytes) * self.eu_bytes)
    }

    /// Bytes a lane keeps for layer `l`'s own work in a group cut by `cut`, held while
    /// it runs: TPU-MLIR's buffers ([`crate::tpumlir::nd_buffers`]). Without the
    /// softmax's, a group of [1, 4, 128, 128] scores and their softmax fits our count
    /// (98,816 B of 256 KiB), and TPU-MLIR refuses it ("local memory allocate failed").
    fn own_buffer_bytes(&self, l: &TxLayer, cut: Slicing) -> u64 {
        let operand = |v: &TxValue| Operand {
            whole: cut.whole_shape(v),
            slice: cut.part_shape(v),
            bytes: u64::from(self.bits_of(v)).div_ceil(8),
        };
        if let Some(head) = &l.head {
            return crate::tpumlir::nd_fused::buffer_bytes(
                head,
                self.lanes,
                self.eu_bytes,
                self.lane_bytes,
            );
        }
        let Some(out) = l.writes.first().map(operand) else {
            return 0;
        };
        let reads: Vec<Operand> = l.reads.iter().map(operand).collect();
        let lanes = Lanes {
            count: self.lanes,
            eu_bytes: self.eu_bytes,
        };
        buffer_bytes(
            BufferKind::of(&l.op_type, l.heads_as_batch),
            &reads,
            &out,
            lanes,
        )
    }

    /// Whether a member reads, through a flat view (from or to a value of at most two
    /// dims), what another member writes. The view runs outside the group, so TPU-MLIR
    /// refuses such a group ("operand does not dominate this use": gpt2_d64_s64 on
    /// bm1688, its LayerNorm and the Gemm after `_v_206_Reshape` in one group).
    fn straddles_a_flat_view(&self, members: &[TxLayer]) -> bool {
        let written: HashSet<&str> = members
            .iter()
            .flat_map(|l| l.writes.iter().map(|v| v.name.as_str()))
            .collect();
        members.iter().flat_map(|l| &l.reads).any(|v| {
            let (mut at, mut flat) = (v.name.as_str(), false);
            for _ in 0..self.views.len() {
                match self.views.get(at) {
                    Some((up, f)) => {
                        flat |= *f;
                        at = up;
                    }
                    None => break,
                }
            }
            flat && written.contains(at)
        })
    }

    /// Whether the group of `members` runs a view (Reshape, Flatten, Squeeze, Unsqueeze)
    /// inside: one a member reads, or one of what a member other than the last writes
    /// (`nd_export` lists both with the group, as TPU-MLIR's own groups hold them). Such a
    /// group is never cut along H: a view's `AllowDataSplit` allows N and C alone.
    /// TPU-MLIR's own groups hold views in N and C slices (llama_d512_s96_b3 on bm1688,
    /// `reshape_171_0_Reshape` in 3 × 3) and never in H slices; our bm1688 export of
    /// llama_d640_s128_b2 with the rotary group and K's `unsqueeze_78_0_Unsqueeze` in 2 H
    /// slices failed its time steps ("local memory allocate failed"), and compiled whole,
    /// in N slices, or in H slices with the Unsqueeze left outside.
    fn holds_a_view(&self, members: &[TxLayer]) -> bool {
        let ops: Vec<&TxLayer> = members.iter().filter(|l| l.op_type != "Permute").collect();
        let deep = |name: &str| self.views.get(name).is_some_and(|(_, flat)| !flat);
        let reads_one = ops.iter().flat_map(|l| &l.reads).any(|v| deep(&v.name));
        let writes_one = ops
            .iter()
            .rev()
            .skip(1)
            .flat_map(|l| &l.writes)
            .any(|v| self.views_from.contains_key(v.name.as_str()));
        reads_one || writes_one
    }

    /// Cycles of layer `l`'s transfer of one slice of `v` in a group cut by `cut`: a
    /// permute's (at a group's edge) moves it a row at a time, the permute done by the
    /// transfer (TPU-MLIR's profiles show no permute layer next to a group:
    /// gpt2_d64_s64's scores, [1, 64, 4, 64] stored permuted by Q·Kᵀ's group in 1,598
    /// cycles, 6.2 a row); any other layer's as [`Self::transfer`].
    fn transfer_for(&self, l: &TxLayer, dir: Dir, v: &TxValue, cut: Slicing) -> f64 {
        let bits = self.bits_of(v);
        if l.op_type == "Permute" {
            crate::nd_global::row_dma_cycles(&self.t, dir, &cut.part(v), bits)
        } else {
            self.transfer(dir, cut.part_shape(v), bits)
        }
    }

    /// Cycles of [`Ctx::transfer_for`] in every slice of `cut`, each at its own size
    /// ([`Slicing::over_slices`]; a permute's in each as in the first). TPU-MLIR's
    /// bm1684x grouping of llama_d288_s96_b5's scaled and masked scores, [5, 6, 96, 96]
    /// in N slices of 2, 2 and 1, loads them in 4,094, 4,094 and 2,047 cycles.
    fn transfers_for(&self, l: &TxLayer, dir: Dir, v: &TxValue, cut: Slicing) -> f64 {
        if l.op_type == "Permute" {
            return self.transfer_for(l, dir, v, cut) * cut.count(v) as f64;
        }
        let bits = self.bits_of(v);
        cut.over_slices(v, |s| self.transfer(dir, s, bits))
    }

    /// Cycles of the load of `input`, which a view the group runs reads: a row at a
    /// time where it is a folded transpose's output, the transpose done by the load as
    /// TPU-MLIR does it (llama_d512_s96_b3's attention output on bm1684x, [3, 8, 96, 64]
    /// loaded as [3, 96, 8, 64] for the output projection: 10,919 cycles, its 2,304 rows
    /// at the load's floor, where its bytes at the load rate take 5,461); else a plain
    /// transfer of a slice, the mean of its slices' ([`Slicing::mean_over_slices`]).
    fn view_input_load(&self, input: &TxValue, cut: Slicing) -> f64 {
        let bits = self.bits_of(input);
        if self.folded_transposes.contains_key(&input.name) {
            crate::nd_global::row_dma_cycles(&self.t, Dir::Load, &cut.part(input), bits)
        } else {
            cut.mean_over_slices(input, |s| self.transfer(Dir::Load, s, bits))
        }
    }

    /// Cycles to move a value of NCHW shape `s` and `bits`-bit elements between global
    /// and local memory in one transfer.
    fn transfer(&self, dir: Dir, s: Shape4, bits: u32) -> f64 {
        act_dma_cycles(&self.t, dir, s, [0, s.n], [0, s.h], bits, 1)
    }

    /// Compute cycles of layer `i` in a group cut by `cut`: a matmul its MACs at the
    /// chip's rate, a softmax by its kernel ([`Ctx::softmax_cycles`]) where the chip
    /// gives its figures, element-wise work its output slice's positions a lane, EU_NUM a
    /// cycle, per FLOP an element (a softmax [`SOFTMAX_LOCAL_OPS`], an activation of a
    /// function table [`function_ops`]), once per slice.
    fn local_compute(&self, i: usize, cut: Slicing) -> f64 {
        let l = &self.layers[i];
        let Some(out) = l.writes.first() else {
            return 0.0;
        };
        if let Some(head) = &l.head {
            // held whole in every group (cut along neither C nor H)
            return head.kernel_cycles(self.lanes as f64, &self.t);
        }
        match l.work {
            Work::Vector { .. } if l.op_type == "Where" => self.where_passes(l, out, cut),
            Work::Vector { .. } if binary(l) => self.binary_passes(l, out, cut),
            Work::Vector { flops } if l.op_type == "Softmax" => self
                .softmax_cycles(out, cut)
                .unwrap_or_else(|| self.vector_passes(l, out, flops, cut)),
            Work::Vector { flops }
                if matches!(l.op_type.as_str(), "LayerNormalization" | "RMSNorm") =>
            {
                self.norm_cycles(l, out, cut)
                    .unwrap_or_else(|| self.vector_passes(l, out, flops, cut))
            }
            Work::Vector { flops } => self.vector_passes(l, out, flops, cut),
            // a cast, slice or concat in local memory is a TIU pass over what it writes:
            // gpt2_d128_s128's head cast to f32 on bm1688, [1, 128, 512], took 512 cycles
            // in TPU-MLIR's group; on bm1684x gpt2_d192_s96_b3's Q slice [3, 96, 192] 36,
            // llama_d320_s256's rotary halves [1, 5, 256, 32] 256 and their concat 512
            Work::Move if matches!(l.op_type.as_str(), "Cast" | "Slice" | "Split" | "Concat") => {
                self.element_passes(out, cut)
            }
            Work::Matmul {
                weight: true, k, n, ..
            } if out.dims.len() == 3 => self.weight_matmul_in_group(i, out, k, n, cut),
            _ => self.costs[i].compute_cycles as f64,
        }
    }

    /// Compute cycles of layer `i` in a group cut by `cut` as TPU-MLIR 1.30.2 estimates
    /// them where it places the group's transfers and allocates it: a binary layer as
    /// any element-wise one, one pass over its output. Its estimate counts neither the
    /// second pass of a slice of one N nor the lane broadcast ([`Ctx::binary_passes`]):
    /// with them, our reproduction of its allocator refused llama_d448_s160_b2's rotary
    /// group on bm1684x, which TPU-MLIR allocates and compiles (26,467 cycles).
    fn estimated_compute(&self, i: usize, cut: Slicing) -> f64 {
        let l = &self.layers[i];
        match (l.work, l.writes.first()) {
            (Work::Vector { flops }, Some(out)) if binary(l) && l.head.is_none() => {
                self.vector_passes(l, out, flops, cut)
            }
            _ => self.local_compute(i, cut),
        }
    }

    /// Cycles of element-wise layer `l` of `flops` writing `out` in a group cut by `cut`:
    /// EU passes over its output, per element a softmax's [`SOFTMAX_LOCAL_OPS`], a
    /// function table's [`function_ops`], else its FLOPs an element.
    fn vector_passes(&self, l: &TxLayer, out: &TxValue, flops: f64, cut: Slicing) -> f64 {
        let per_element = match l.op_type.as_str() {
            "Softmax" => SOFTMAX_LOCAL_OPS,
            op => function_ops(op).unwrap_or(flops / out.elements().max(1.0)),
        };
        per_element * self.element_passes(out, cut)
    }

    /// Cycles of a softmax writing `out` in a group cut by `cut`, over its last axis, by
    /// the chip's local softmax figures ([`local_softmax`]): each slice's planes, its
    /// channels over the lanes and its rows at the scores' width; `None` on a chip whose
    /// file gives no such figures.
    /// Cycles of a grouped LayerNorm or RMSNorm by its local kernel
    /// ([`crate::norm_kernel`]) where the
    /// chip gives its figures: every slice's rows a lane holds (N, C over the lanes), each
    /// the norm's axis wide.
    fn norm_cycles(&self, l: &TxLayer, out: &TxValue, cut: Slicing) -> Option<f64> {
        let figures = self.t.local_norms.of(&l.op_type)?;
        let eu = self.t.eltwise_per_cycle_per_lane.max(1.0) as u64;
        Some(cut.over_slices(out, |s| {
            let slice = crate::norm_kernel::NormSlice {
                lane_rows: s.n.saturating_mul(s.c.div_ceil(self.lanes)),
                width: s.h.saturating_mul(s.w),
            };
            slice.cycles(eu, &figures)
        }))
    }
    fn softmax_cycles(&self, out: &TxValue, cut: Slicing) -> Option<f64> {
        let figures = self.t.local_softmax?;
        let narrow = f64::from(self.bits.max(1)) / f64::from(self.bits_of(out).max(1));
        let eu = (self.t.eltwise_per_cycle_per_lane * narrow).max(1.0) as u64;
        Some(cut.over_slices(out, |s| {
            let plane = s.h.saturating_mul(s.w).max(1);
            let row = out.dims.last().copied().unwrap_or(1).clamp(1, plane);
            let slice = local_softmax::LocalSoftmax {
                planes: s.n,
                channels: s.c,
                rows: plane / row,
                row,
            };
            slice.cycles(self.lanes, eu, &figures)
        }))
    }

    /// Cycles of Where `l` writing `out` in a group cut by `cut`, at the chip's grouped
    /// Where rate (`local_where_elements_per_cycle`, else the EU rate). In a cut group
    /// TPU-MLIR 1.30.2's Where selects over the whole mask it holds every slice, not
    /// over the slice: each of gpt2_d576_s200_b2's 10 H slices on bm1684x took 5,000
    /// cycles, its mask [2, 9, 200, 200] at 16 a cycle (8,000 elements a lane a slice);
    /// so did gpt2_d192_s96_b3's 2 H slices (1,728), llama_d320_s256's 4 (4,096) and, in
    /// N slices, llama_d512_s96_b3's on bm1688 (6,912: [3, 8, 96, 96] at 4). Our bm1684x
    /// plan of gpt2_d576_s200_b2 grouped that Where and its softmax (168,236 cycles
    /// planned, 199,463 compiled; 144,165 global) and TPU-MLIR's cmodel aborted on it.
    fn where_passes(&self, l: &TxLayer, out: &TxValue, cut: Slicing) -> f64 {
        let rate = match self.t.used.local_where_elements_per_cycle {
            r if r > 0.0 => r,
            _ => self.t.eltwise_per_cycle_per_lane.max(1.0),
        };
        // the mask: a weight held whole (not one broadcast and cut with the activation)
        let mask = l.reads.iter().find(|v| v.weight && !v.split);
        match mask {
            Some(m) if cut.total() > 1 => {
                self.passes_over(nchw(m), rate, out) * cut.count(out) as f64
            }
            _ => cut.over_slices(out, |s| self.passes_over(s, rate, out)),
        }
    }

    /// Cycles of binary layer `l` (two operands, [`binary`]) writing `out` in a group cut
    /// by `cut`. TPU-MLIR 1.30.2's AR command of such a layer passes over at least two N
    /// of its slice: a slice of one sequence takes twice the passes of EU work a plane,
    /// two or more take one (`bench/tpumlir_binary_passes.py`, every grouped Add and Mul
    /// of two operands in the transformer zoo's profiles of TPU-MLIR's own groupings,
    /// both chips: 409 with a slice of one N at 2.00× (1.33× where slices of 2 and 1
    /// alternate), 415 of more at 1.00×; an Add or Mul by a constant, a slice, a concat
    /// or a cast at 1.00× whatever the N). An operand of one channel (rotary's cos and
    /// sin tables, BERT's padding mask) is first broadcast to every lane (LANE_BC), one
    /// EU pass over its plane a slice: llama_d640_s128_b2's cos [1, 1, 128, 64] took
    /// 2,048 cycles in its 2 N slices on bm1688, 8,192 elements a slice at 8 a cycle.
    fn binary_passes(&self, l: &TxLayer, out: &TxValue, cut: Slicing) -> f64 {
        let eu = self.t.eltwise_per_cycle_per_lane.max(1.0);
        let broadcast = |slice: Shape4| -> f64 {
            l.reads
                .iter()
                .filter(|v| nchw(v).c == 1 && slice.c > 1)
                .map(|v| {
                    let s = cut.part_shape(v);
                    let n = if cut.cuts_n(v) { slice.n } else { s.n };
                    ((n * s.h * s.w) as f64 / eu).ceil()
                })
                .sum()
        };
        cut.over_slices(out, |slice| {
            let at_least_two = slice.n.max(2) as f64 / slice.n.max(1) as f64;
            self.passes_over(slice, eu, out) * at_least_two + broadcast(slice)
        })
    }

    /// MAC cycles of weight matmul `i`, `[b, s, k]·[k, n]` writing `out`, inside a group
    /// ([`group_matmul`]), each of TPU-MLIR's slices on its own ([`tpu_mlir_slices`]: its
    /// C slices whole lanes but the last, whose planes of few rows may gather into one
    /// pass).
    fn weight_matmul_in_group(&self, i: usize, out: &TxValue, k: u64, n: u64, cut: Slicing) -> f64 {
        let s = nchw(out);
        let input_reused = self.layers[i]
            .reads
            .iter()
            .find(|v| !v.weight)
            .and_then(|v| self.readers.get(v.name.as_str()))
            .is_some_and(|r| r.len() > 1);
        let planes = if cut.cuts_n(out) {
            n_slices(s.n, cut.nsecs)
        } else {
            vec![s.n]
        };
        let rows = match cut.axis {
            Axis::C if cut.cuts_along_axis(out) => tpu_mlir_slices(s.c, cut.secs, self.lanes),
            _ => vec![s.c],
        };
        let slice = |planes, rows| group_matmul::GroupMatmul {
            planes,
            rows,
            k,
            n,
            input_reused,
        };
        planes
            .iter()
            .flat_map(|&p| rows.iter().map(move |&r| (p, r)))
            .map(|(p, r)| slice(p, r).compute_cycles(self.lanes, &self.t))
            .sum()
    }

    /// Cycles of one EU operation over every element of `out` in local memory, once per
    /// slice of `cut` ([`Slicing::over_slices`]): its output slice's positions a lane,
    /// EU_NUM a cycle, at its width.
    /// A view run in a group is such a copy (bm1688's `tpu.Reshape` of GPT-2's heads,
    /// [1, 128, 4, 32]: 64 cycles, as this gives; bm1684x's of [1, 64, 12, 64]: 24).
    fn element_passes(&self, out: &TxValue, cut: Slicing) -> f64 {
        let eu = self.t.eltwise_per_cycle_per_lane.max(1.0);
        cut.over_slices(out, |s| self.passes_over(s, eu, out))
    }

    /// Cycles of one pass over `s`'s positions a lane at `per_cycle` a cycle, at the
    /// width of `out`.
    fn passes_over(&self, s: Shape4, per_cycle: f64, out: &TxValue) -> f64 {
        let wide = f64::from(self.bits_of(out)) / f64::from(self.bits.max(1));
        let positions =
            (s.n * s.c.div_ceil(self.lanes)) as f64 * ((s.h * s.w) as f64 / per_cycle).ceil();
        positions * wide
    }

    /// The group of layers `start..end`, or `None` when one may not join a group or its
    /// tensors fit a lane in no slicing. Unsliced if it fits so; else the cheapest cut
    /// ([`Ctx::cheapest_cut`]).
    fn group(&self, start: usize, end: usize) -> Option<NdGroup> {
        self.group_within(start, end, u64::MAX)
            .map(Candidate::timed)
    }

    /// [`Ctx::group`], where a caller that only wants a group faster than `budget`
    /// cycles is told [`Candidate::Slower`] instead of a group held whole that cannot
    /// take less (its compute or its transfers alone take `budget` or more): such a group
    /// is not timed in TPU-MLIR's time steps, the costly part of planning. Whether it
    /// fits is still found out.
    fn group_within(&self, start: usize, end: usize, budget: u64) -> Option<Candidate> {
        let members = &self.layers[start..end];
        if members.len() < 2 || !members.iter().all(groupable) {
            return None;
        }
        if !self.permutes_at_edges(start, end) || too_few(members) {
            return None;
        }
        if self.straddles_a_flat_view(members) {
            return None;
        }
        if let Some(whole) = self.sliced_within(start, end, Slicing::WHOLE, budget) {
            return Some(whole);
        }
        self.cheapest_cut(start, end).map(Candidate::Timed)
    }

    /// The cheapest of the group `start..end` in the fewest C slices and in the fewest
    /// H slices that fit, where every layer allows that axis ([`slices_along`]), and cut
    /// along the batch ([`Ctx::fewest_batch_slices`]). Searched along C and H alone, 8 of
    /// the 14 plans that N slices would change compiled slower or not at all (fortieth
    /// session); with cut groups timed in TPU-MLIR's pipelined time steps, grouped
    /// softmaxes by their kernel and weight matmuls by TPU-MLIR's slices, 7 of 9 compile
    /// as fast or faster (gpt2_d208_s72_b6 on bm1688 1.024 of TPU-MLIR's own to 1.001,
    /// llama_d512_s96_b3 1.017 to 1.004), 2 slower (RESULTS-plan.md).
    fn cheapest_cut(&self, start: usize, end: usize) -> Option<NdGroup> {
        let members = &self.layers[start..end];
        if self.splits_a_shared_value(start, end) || self.computes_a_whole_operand(start, end) {
            return None;
        }
        let holds_a_view = self.holds_a_view(members);
        let axes: Vec<Axis> = [Axis::C, Axis::H]
            .into_iter()
            .filter(|&axis| members.iter().all(|l| slices_along(l, axis)))
            .filter(|&axis| axis != Axis::H || !holds_a_view)
            .collect();
        let along = axes
            .iter()
            .filter_map(|&axis| self.fewest_slices(start, end, 1, axis));
        along
            .chain(self.fewest_batch_slices(start, end, &axes))
            .min_by_key(|g| g.cycles)
    }

    /// The batch of the group `start..end`: the most sequences an activation it writes
    /// holds (1 where it writes none of three dims or more).
    fn batch_of(&self, start: usize, end: usize) -> u64 {
        self.layers[start..end]
            .iter()
            .flat_map(|l| l.writes.iter())
            .filter(|v| v.dims.len() >= 3 && !v.weight)
            .map(|v| v.dims[0])
            .max()
            .unwrap_or(1)
    }

    /// The group `start..end` cut along the batch, as TPU-MLIR cuts first: in the fewest
    /// N slices that fit, or in one sequence a slice and the fewest slices along one of
    /// `axes` in each; `None` for a group of one sequence.
    fn fewest_batch_slices(&self, start: usize, end: usize, axes: &[Axis]) -> Option<NdGroup> {
        let batch = self.batch_of(start, end);
        if batch < 2 {
            return None;
        }
        let at = |nsecs| self.fitting(start, end, Slicing::new(nsecs, Axis::C, 1));
        if let Some(g) = fewest(2, batch, at) {
            return Some(self.timed(g));
        }
        axes.iter()
            .filter_map(|&axis| self.fewest_slices(start, end, batch, axis))
            .min_by_key(|g| g.cycles)
    }

    /// Whether every permute of `start..end` is fused into the group's load or store: it
    /// loads what only the group reads, or stores what the group writes for others. TPU-MLIR
    /// 1.30.2 runs a permute its cache lists as global inside the load of the group that
    /// reads it, else the store of the group that writes what it reads, at half the rate
    /// (llama_d320_s256's Q and K each through its permute into the rotary group, 163,840
    /// bytes in 6,066 cycles on bm1684x where a plain load takes 3,034; GPT-2's scaled
    /// scores out of the Q·Kᵀ group through theirs).
    fn permutes_at_edges(&self, start: usize, end: usize) -> bool {
        self.layers[start..end]
            .iter()
            .filter(|l| l.op_type == "Permute")
            .all(|l| self.edge_fusion(l, start, end).is_some())
    }

    /// How the run `start..end` would fuse permute `l` (a member, or a layer beside the
    /// run) into one of its transfers: its load, where only the run reads what it writes
    /// and it reads nothing the run writes; its store, where it reads what the run writes
    /// and only others read what it writes. A value and its views are one value here: a
    /// member's view of what a member writes is written in the group (llama_d160_s48_b7
    /// on bm1688: Q's matmul piece, its Reshape and the permute after it, in one group
    /// with the rotary work, did not compile: "transpose_45_0_Transpose: operand #0 does
    /// not dominate this use").
    fn edge_fusion(&self, l: &TxLayer, start: usize, end: usize) -> Option<Dir> {
        let written: HashSet<&str> = self.layers[start..end]
            .iter()
            .flat_map(|l| l.writes.iter().map(|v| v.name.as_str()))
            .collect();
        let inside = |j: &usize| (start..end).contains(j);
        let written_here = |v: &TxValue| written.contains(self.viewed(&v.name));
        let readers = |v: &TxValue| self.readers_through_views(&v.name);
        let loads = l.reads.iter().all(|v| !written_here(v))
            && l.writes.iter().all(|v| readers(v).iter().all(inside));
        let stores = l.reads.iter().all(written_here)
            && l.writes.iter().all(|v| !readers(v).iter().any(inside));
        match (loads, stores) {
            (true, _) => Some(Dir::Load),
            (false, true) => Some(Dir::Store),
            (false, false) => None,
        }
    }

    /// Whether TPU-MLIR would fuse the global permute at layer `i` into the run `run`
    /// ending right before it (into its store) or starting right after it (into its
    /// load): it moves a permute beside a layer group into the group's transfer whatever
    /// the cache lists, so a plan with that permute global is not what it compiles
    /// (gpt2_d112_s12_b2 on bm1684x: our cache's two global permutes around the
    /// Where-and-softmax group compiled into that group's load and store, 5,301 cycles
    /// where the plan said 3,373).
    fn fuses_beside(&self, i: usize, run: &NdGroup) -> bool {
        let l = &self.layers[i];
        if l.op_type != "Permute" || run.end - run.start < 2 {
            return false;
        }
        let fusion = self.edge_fusion(l, run.start, run.end);
        if run.end == i {
            fusion == Some(Dir::Store)
        } else {
            // read by the run, and by it alone
            run.start == i + 1
                && fusion == Some(Dir::Load)
                && l.writes
                    .iter()
                    .all(|v| !self.readers_through_views(&v.name).is_empty())
        }
    }

    /// The group `start..end` in `nsecs` N slices, each cut in the fewest slices along
    /// `axis` that fit, or `None` when even [`MAX_ND_SLICES`] do not.
    fn fewest_slices(&self, start: usize, end: usize, nsecs: u64, axis: Axis) -> Option<NdGroup> {
        // found by fit alone, the group timed once
        let at = |secs| self.fitting(start, end, Slicing::new(nsecs, axis, secs));
        fewest(2, MAX_ND_SLICES, at).map(|g| self.timed(g))
    }

    /// The group `start..end` cut in `cut`'s slices, or `None` when it does not fit
    /// (checked before it is timed in TPU-MLIR's time steps, the costly part); a group
    /// held whole left untimed when it cannot take less than `budget` cycles
    /// ([`Ctx::timed_within`]).
    fn sliced_within(
        &self,
        start: usize,
        end: usize,
        cut: Slicing,
        budget: u64,
    ) -> Option<Candidate> {
        self.fitting(start, end, cut)
            .map(|g| self.timed_within(g, budget))
    }

    /// The group `start..end` cut in `cut`'s slices, untimed, or `None` when it does not
    /// fit ([`Ctx::fits`]).
    fn fitting(&self, start: usize, end: usize, cut: Slicing) -> Option<NdGroup> {
        let g = self.measure_untimed(start, end, cut);
        self.fits(&g, cut).then_some(g)
    }

    /// Whether `g`, cut by `cut`, fits a lane: by the live-byte bound, then by TPU-MLIR's
    /// time steps and allocator (the bound is from below: llama_d320_s256's scores go in
    /// 4 H slices on bm1684x, not the 3 it allows).
    fn fits(&self, g: &NdGroup, cut: Slicing) -> bool {
        g.lane_bytes <= self.lane_bytes && self.tpu_mlir_allocates(g.start, g.end, cut)
    }

    /// The group `start..end` cut in `cut`'s slices, timed, whether it fits or not.
    fn measure(&self, start: usize, end: usize, cut: Slicing) -> NdGroup {
        self.timed(self.measure_untimed(start, end, cut))
    }

    /// `g` with its cycles, where [`Ctx::measure_untimed`] left them out: a group held
    /// whole is timed in TPU-MLIR's time steps ([`Ctx::one_loop_cycles`]), a cut one in
    /// them software-pipelined over its slices ([`Ctx::pipelined_cycles`]).
    fn timed(&self, g: NdGroup) -> NdGroup {
        self.timed_within(g, u64::MAX).timed()
    }

    /// [`Ctx::timed`], or [`Candidate::Slower`] when `g` is held whole and cannot take
    /// less than `budget` cycles.
    fn timed_within(&self, mut g: NdGroup, budget: u64) -> Candidate {
        let cut = Slicing::of(&g);
        if cut.total() == 1 {
            match self.one_loop_cycles(g.start, g.end, budget) {
                Some(cycles) => g.cycles = cycles.ceil() as u64,
                None => return Candidate::Slower,
            }
        } else if let Some(cycles) = self.pipelined_cycles(g.start, g.end, cut) {
            g.cycles = cycles.ceil() as u64;
        }
        Candidate::Timed(g)
    }

    /// A weight a cut group would hold through its loop of slices: one it does not
    /// cut or write.
    fn holds_weight(&self, v: &TxValue, written: &HashSet<&str>, cut: Slicing) -> bool {
        v.weight && !cut.cuts(v) && !written.contains(v.name.as_str())
    }

    /// Whether `members`, cut by `cut`, may hold their weights through the loop of
    /// slices ([`crate::tpumlir::nd_place::may_hold`]: all of them in less than a lane).
    fn may_hold_weights(&self, members: &[TxLayer], written: &HashSet<&str>, cut: Slicing) -> bool {
        let mut seen: HashSet<&str> = HashSet::default();
        let held = members
            .iter()
            .flat_map(|l| l.reads.iter())
            .filter(|v| self.holds_weight(v, written, cut) && seen.insert(v.name.as_str()))
            .map(|v| self.lane_bytes_in(cut.part_shape(v), self.bits_of(v)))
            .fold(0u64, u64::saturating_add);
        crate::tpumlir::nd_place::may_hold(held, self.lane_bytes)
    }

    /// [`Ctx::measure`] without its time steps: a group held whole 0 cycles until
    /// [`Ctx::timed`], a cut one the overlap of its slices' transfers and compute
    /// ([`sliced_group_cycles`]), which [`Ctx::timed`] replaces with its time steps.
    fn measure_untimed(&self, start: usize, end: usize, cut: Slicing) -> NdGroup {
        let cut = self.laid_out(start, end, cut);
        let members = &self.layers[start..end];
        let written: HashSet<&str> = members
            .iter()
            .flat_map(|l| l.writes.iter().map(|v| v.name.as_str()))
            .collect();
        let mut spans: HashMap<&str, Span> = HashMap::default();
        let mut loaded: HashSet<&str> = HashSet::default();
        let holds = cut.total() > 1 && self.may_hold_weights(members, &written, cut);
        let (mut load, mut store) = (0u64, 0u64);
        let mut dma = 0f64;
        // each member's loads and stores, in cycles
        let mut steps: Vec<Step> = Vec::with_capacity(members.len());
        for l in members {
            let before = dma;
            let mut step = Step::default();
            // a permute at the group's edge is its load or its store: only the side in
            // the group takes room (what it loads into, what it stores from)
            let permute = l.op_type == "Permute";
            let loaded_by_permute = |v: &&TxValue| permute && !written.contains(v.name.as_str());
            let stored_by_permute = |v: &&TxValue| {
                permute
                    && !self
                        .readers_through_views(&v.name)
                        .iter()
                        .any(|j| (start..end).contains(j))
            };
            let room = l
                .reads
                .iter()
                .filter(|v| !loaded_by_permute(v))
                .chain(l.writes.iter().filter(|v| !stored_by_permute(v)));
            for v in room {
                let bytes = self.lane_bytes_in(cut.part_shape(v), self.bits_of(v));
                let k = steps.len();
                // a value is live from its first use (TPU-MLIR loads what a member
                // reads just before it, and moves loads earlier only where they fit);
                // a weight a cut group holds through its loop of slices, throughout
                let held = holds && self.holds_weight(v, &written, cut);
                let (first, last) = if held { (0, members.len() - 1) } else { (k, k) };
                spans
                    .entry(v.name.as_str())
                    .and_modify(|s| s.last = s.last.max(last))
                    .or_insert(Span { first, last, bytes });
            }
            for v in l
                .reads
                .iter()
                .filter(|v| !written.contains(v.name.as_str()))
            {
                if loaded.insert(v.name.as_str()) {
                    load = load.saturating_add(self.value_bytes(v));
                    let one = self.transfer_for(l, Dir::Load, v, cut);
                    dma += self.transfers_for(l, Dir::Load, v, cut);
                    step.first_load += one;
                }
            }
            step.load = dma - before;
            for v in &l.writes {
                let leaves = self
                    .readers
                    .get(v.name.as_str())
                    .map_or(true, |r| r.iter().any(|&j| j < start || j >= end));
                if leaves {
                    store = store.saturating_add(self.value_bytes(v));
                    let one = self.transfer_for(l, Dir::Store, v, cut);
                    dma += self.transfers_for(l, Dir::Store, v, cut);
                    step.first_store += one;
                }
            }
            step.store = dma - before - step.load;
            steps.push(step);
        }
        // the most a lane holds at once, a slice of each cut value: a bound from below;
        // TPU-MLIR's time steps and allocator, with their wrapping lifetimes and banks,
        // have the last word (`fits`)
        let lane = (0..members.len())
            .map(|k| {
                let live = spans.values().filter(|s| s.first <= k && k <= s.last);
                live.fold(self.own_buffer_bytes(&members[k], cut), |sum, s| {
                    sum.saturating_add(s.bytes)
                })
            })
            .max()
            .unwrap_or(0);
        for (step, i) in steps.iter_mut().zip(start..end) {
            step.compute = self.local_compute(i, cut);
        }
        let compute: f64 = steps.iter().map(|s| s.compute).sum();
        let cycles = if cut.total() == 1 {
            0.0
        } else {
            sliced_group_cycles(&steps, cut.total())
        };
        NdGroup {
            start,
            end,
            nsecs: cut.nsecs,
            csecs: if cut.axis == Axis::C { cut.secs } else { 1 },
            hsecs: if cut.axis == Axis::H { cut.secs } else { 1 },
            lane_bytes: lane,
            load_bytes: load,
            store_bytes: store,
            compute_cycles: compute.round() as u64,
            dma_cycles: dma.round() as u64,
            cycles: cycles.ceil() as u64,
        }
    }

    /// Cycles of the group `start..end` held whole, run in TPU-MLIR's time steps
    /// ([`crate::tpumlir::nd_place::one_loop_cycles`]); a repeated block's group is timed
    /// once. `None`, untimed, when it cannot take less than `budget`
    /// ([`crate::tpumlir::nd_place::one_loop_floor`]).
    fn one_loop_cycles(&self, start: usize, end: usize, budget: u64) -> Option<f64> {
        let m = self.group_model(start, end, Slicing::WHOLE, Stores::Moved);
        if m.ops.len() < 2 {
            return Some(
                m.ops.iter().map(|o| o.cycles as f64).sum::<f64>()
                    + m.bufs.iter().map(|b| b.dma_cycles as f64).sum::<f64>(),
            );
        }
        let key = (m.bufs, m.ops, false);
        if let Some(&known) = self.timed.borrow().get(&key) {
            return Some(known);
        }
        let floor = u64::try_from(one_loop_floor(&key.0, &key.1)).unwrap_or(0);
        if floor >= budget {
            return None;
        }
        let cycles = one_loop_cycles(&key.0, &key.1, self.lane(), &self.calib);
        self.timed.borrow_mut().insert(key, cycles);
        Some(cycles)
    }

    /// Cycles of the group `start..end` cut by `cut` in TPU-MLIR's software-pipelined
    /// time steps ([`crate::tpumlir::nd_place::pipelined_cycles`]), or `None` for a
    /// group of fewer than two ops.
    fn pipelined_cycles(&self, start: usize, end: usize, cut: Slicing) -> Option<f64> {
        let m = self.group_model(start, end, cut, Stores::Moved);
        if m.ops.len() < 2 {
            return None;
        }
        // a transformer repeats its blocks: the same group, the same cycles
        let count = SliceCount {
            total: cut.total(),
            nsecs: cut.nsecs,
        };
        let key = ((m.bufs, m.ops, true), count);
        if let Some(&known) = self.pipelined.borrow().get(&key) {
            return Some(known);
        }
        let ((bufs, ops, _), _) = &key;
        let shares = self.slice_shares(start, end, cut);
        let cycles = crate::tpumlir::nd_place::pipelined_cycles(
            bufs,
            ops,
            self.lane(),
            &self.calib,
            count.total,
            &shares,
        );
        self.pipelined.borrow_mut().insert(key, cycles);
        Some(cycles)
    }

    /// Each slice of the group `start..end` cut by `cut` against the mean one: its N
    /// slices the larger first, as TPU-MLIR cuts them, and in each the axis's slices in
    /// turn (an order we assume; no group of the zoo is cut unevenly along N and along an
    /// axis at once); empty where every slice is alike (N not cut, or cut evenly).
    fn slice_shares(&self, start: usize, end: usize, cut: Slicing) -> Vec<f64> {
        let batch = self.batch_of(start, end);
        let sizes = n_slices(batch, cut.nsecs);
        if sizes.iter().all(|&n| n == sizes[0]) {
            return Vec::new();
        }
        let mean = batch as f64 / sizes.len() as f64;
        sizes
            .iter()
            .flat_map(|&n| std::iter::repeat(n as f64 / mean).take(cut.secs.max(1) as usize))
            .collect()
    }

    /// Cycles to load `v` into the group `start..end` (cut by `cut`) or store it out of
    /// it: through the permute at the group's edge that writes it (a load) or reads it (a
    /// store), at that permute's rate, else as any transfer, a slice's the mean of its
    /// slices' ([`Slicing::mean_over_slices`]). gpt2_d256_s64_b2's scaled scores leave
    /// TPU-MLIR's Q·Kᵀ group through their permute in 6,397 cycles, twice a plain
    /// store's.
    fn edge_transfer(&self, start: usize, end: usize, dir: Dir, v: &TxValue, cut: Slicing) -> f64 {
        let is_edge_permute =
            |j: &usize| (start..end).contains(j) && self.layers[*j].op_type == "Permute";
        let permute = match dir {
            Dir::Load => (start..end)
                .filter(|j| is_edge_permute(j))
                .find(|&j| self.layers[j].writes.iter().any(|w| w.name == v.name)),
            Dir::Store => self
                .readers
                .get(v.name.as_str())
                .and_then(|r| r.iter().copied().find(|j| is_edge_permute(j))),
        };
        match permute {
            Some(j) => self.transfer_for(&self.layers[j], dir, v, cut),
            None => {
                let bits = self.bits_of(v);
                cut.mean_over_slices(v, |s| self.transfer(dir, s, bits))
            }
        }
    }

    /// What a layer reading `v` reads in a group: the view of it, where only views read it.
    fn as_read<'s>(&'s self, v: &'s TxValue) -> &'s TxValue {
        self.read_through.get(&v.name).unwrap_or(v)
    }

    /// The layers reading `name`; `through`, as a group reads it ([`Ctx::as_read`]): a
    /// value only views read has none of its own, and its view has the layers reading
    /// either.
    fn readers_of(&self, name: &str, through: bool) -> impl Iterator<Item = usize> + '_ {
        let own = (!through || !self.read_through.contains_key(name))
            .then(|| self.readers.get(name))
            .flatten();
        let via = through
            .then(|| self.read_via.get(name))
            .flatten()
            .and_then(|viewed| self.readers.get(viewed.as_str()));
        own.into_iter().chain(via).flatten().copied()
    }

    /// The group `start..end` cut by `cut` as TPU-MLIR's time steps and allocator see it
    /// ([`crate::tpumlir::nd_place`]): every value one slice's room, weights held, each
    /// layer's own buffer, and the views the export lists with the group as ops of their
    /// own, each writing a buffer (TPU-MLIR's `tpu.Reshape` in a group: llama_d320_s256's
    /// `reshape_95_0_Reshape` on bm1688 reads the loaded P·V and writes 1,280 bytes a
    /// lane of its own); a permute at the group's edge is the load or store it rides on,
    /// not an op ([`Ctx::edge_transfer`]). `stores` says which values leave it. Each op
    /// computes one slice, as a row of TPU-MLIR's time steps does, beside one slice's
    /// transfers: its estimates of llama_d640_s128_b2's FFN-down…QKV group in 4 C slices
    /// on bm1688 give the down projection 69,120 cycles of its 276,480, and the slack it
    /// moves the next layer's weights by follows from that.
    fn group_model(
        &self,
        start: usize,
        end: usize,
        cut: Slicing,
        stores: Stores,
    ) -> GroupModel<'_> {
        let cut = self.laid_out(start, end, cut);
        // A slice's cycles: the mean of the loop's, as it runs; for the allocation, its
        // first and largest slice's, which TPU-MLIR estimates its time steps at (its
        // `stripe_mine_max_slice`): the held-out bert_d320_s112_b3's whole network forced
        // into 2 N slices of its 3 sequences on bm1688 had its matmuls estimated at
        // 25,760 cycles, 2 sequences' worth, and TPU-MLIR's slack moves with those
        // estimates give its time steps exactly (38 of 38 transfers), where the mean
        // slice's moved its first FFN weight 9 steps early.
        let for_allocation = stores == Stores::Bound;
        let share = |v: &TxValue| {
            if for_allocation {
                cut.largest_share(v)
            } else {
                1.0
            }
        };
        let per_slice =
            |cycles: f64, share: f64| (cycles * share / cut.total().max(1) as f64).round() as i64;
        let ops: Vec<usize> = (start..end)
            .filter(|&i| self.layers[i].op_type != "Permute")
            .collect();
        let written: HashSet<&str> = ops
            .iter()
            .flat_map(|&i| self.layers[i].writes.iter().map(|v| v.name.as_str()))
            .collect();
        // For the allocation, a layer reads a value computed in the group through the
        // views only they read, as TPU-MLIR's ops do: its Q·Kᵀ reads Q's `tpu.Reshape`,
        // whose buffer lives to the matmul while the split's dies at the reshape (with
        // the reshape stored instead, as a view no layer read, bert_d320_s112_b3's whole
        // network in 2 N slices allocated in our reproduction and not in TPU-MLIR). A
        // value from outside the group arrives as the view its producer's group stored.
        let read = |v: &'a TxValue| {
            if for_allocation && written.contains(v.name.as_str()) {
                self.as_read(v)
            } else {
                v
            }
        };
        let read_by_any = |name: &str| self.readers_of(name, for_allocation).next().is_some();
        let leaves = |name: &str| {
            if read_by_any(name) {
                self.readers_of(name, for_allocation)
                    .any(|j| j < start || j >= end || self.layers[j].op_type == "Permute")
            } else {
                // read through its views only, or a graph output
                !self.views_from.contains_key(name)
            }
        };
        // timed over its slices, what a cut group holds whole loads once: its weights
        // and the K and V its attention reads whole (TPU-MLIR's bm1688 group of
        // bert_d256_s384's Q·Kᵀ and softmax in 3 C slices loads K and V once, Q and the
        // mask every slice); its allocation, as before, holds the weights alone
        let mut m = GroupModel {
            holds_read_whole: stores == Stores::Moved && cut.total() > 1,
            ..GroupModel::default()
        };
        for &i in &ops {
            let l = &self.layers[i];
            for v in l
                .reads
                .iter()
                .map(&read)
                .filter(|v| !written.contains(v.name.as_str()))
            {
                if m.index.contains_key(v.name.as_str()) {
                    continue;
                }
                if let Some(view) = self.view_of.get(v.name.as_str()) {
                    // a view only the group reads: its input loaded, the view an op
                    let x = m.value(self, &view.input, cut);
                    let one = self.view_input_load(&view.input, cut) * share(&view.input);
                    m.load(x, one);
                    let y = m.value(self, v, cut);
                    m.op(
                        vec![x],
                        vec![y],
                        None,
                        false,
                        per_slice(self.element_passes(v, cut), share(v)),
                    );
                }
            }
            let operands: Vec<usize> = l
                .reads
                .iter()
                .map(|v| m.value(self, read(v), cut))
                .collect();
            let results: Vec<usize> = l.writes.iter().map(|v| m.value(self, v, cut)).collect();
            for (v, &b) in l.reads.iter().map(read).zip(&operands) {
                if !written.contains(v.name.as_str()) && !self.view_of.contains_key(v.name.as_str())
                {
                    m.load(
                        b,
                        self.edge_transfer(start, end, Dir::Load, v, cut) * share(v),
                    );
                }
            }
            let own = self.own_buffer_bytes(l, cut);
            let imm = (own > 0).then(|| m.scratch(own));
            let inplace = matches!(l.op_type.as_str(), "Add" | "Sub" | "Mul" | "Div")
                && l.reads.first().zip(l.writes.first()).is_some_and(|(x, y)| {
                    self.readers
                        .get(x.name.as_str())
                        .is_some_and(|r| r.len() == 1)
                        && y.elements() <= x.elements()
                });
            let compute = match stores {
                Stores::Bound => self.estimated_compute(i, cut),
                Stores::Moved => self.local_compute(i, cut),
            };
            let cycles = per_slice(compute, l.writes.first().map_or(1.0, share));
            m.op(operands, results.clone(), imm, inplace, cycles);
            // what it writes leaves the group as it is, or through the views of it; the
            // views of what the last op writes run outside the group (`nd_export`)
            let last = ops.last() == Some(&i);
            let mut from: Vec<(&TxValue, usize)> = l.writes.iter().zip(results).collect();
            while let Some((v, b)) = from.pop() {
                let viewed = self.views_from.contains_key(v.name.as_str());
                // for the timing, a view is stored as read (a view no layer reads but
                // the graph does leaves through the value it views)
                let timed_view =
                    stores == Stores::Moved && self.view_of.contains_key(v.name.as_str());
                let stored = match (timed_view, read_by_any(&v.name)) {
                    (true, true) => leaves(v.name.as_str()),
                    (true, false) => !self.read_in_graph.contains(v.name.as_str()),
                    (false, _) => leaves(v.name.as_str()) || (last && viewed),
                };
                if stored {
                    m.store(
                        b,
                        self.edge_transfer(start, end, Dir::Store, v, cut) * share(v),
                    );
                }
                if last {
                    continue;
                }
                for w in self.views_from.get(v.name.as_str()).into_iter().flatten() {
                    let y = m.value(self, w, cut);
                    m.op(
                        vec![b],
                        vec![y],
                        None,
                        false,
                        per_slice(self.element_passes(w, cut), share(w)),
                    );
                    from.push((w, y));
                }
            }
        }
        crate::tpumlir::nd_place::release_holds_beyond(&mut m.bufs, self.lane_bytes);
        m
    }

    /// `cut` with the layout TPU-MLIR gives the group `start..end`: its values' rows
    /// over the lanes where it is a `GROUP_SMALL_C` group ([`small_c::is_small_c_group`]).
    fn laid_out(&self, start: usize, end: usize, cut: Slicing) -> Slicing {
        let small_c = small_c::is_small_c_group(&self.layers[start..end], self.lanes);
        Slicing {
            small_c_lanes: if small_c { self.lanes } else { 0 },
            ..cut
        }
    }

    /// Whether TPU-MLIR's allocator finds room for the group `start..end` cut by `cut`
    /// ([`Ctx::group_model`]).
    fn tpu_mlir_allocates(&self, start: usize, end: usize, cut: Slicing) -> bool {
        let m = self.group_model(start, end, cut, Stores::Bound);
        let lane = self.lane();
        let sliced = cut.total() > 1;
        // a transformer repeats its blocks: the same group, the same answer
        let key = (m.bufs, m.ops, sliced);
        if let Some(&known) = self.allocated.borrow().get(&key) {
            return known;
        }
        // With our cycle estimates alone (they follow TPU-MLIR's own, bm1688's transfers
        // through its calibration). Until the thirty-first session a group also had to
        // allocate with every transfer 1,000 times slower, moved as far as slack lets it;
        // TPU-MLIR does not go so far: that check refused TPU-MLIR's own whole group of
        // bert_d384_s128 and its FFN of llama_d320_s256 in 3 C slices on bm1688, both of
        // which compile (and so do our exports choosing them), and it refused nothing
        // TPU-MLIR refuses in the zoo.
        let fits = allocates(&key.0, &key.1, lane, sliced, &self.calib);
        self.allocated.borrow_mut().insert(key, fits);
        fits
    }

    fn global(&self, i: usize) -> NdGroup {
        let c = self.costs[i];
        NdGroup {
            compute_cycles: c.compute_cycles,
            dma_cycles: c.dma_cycles,
            cycles: c.cycles,
            ..untimed_run(i, i + 1)
        }
    }
}

/// Every value only views of the graph read, one view each, by name: the view (its last,
/// where views of views follow) a layer reading the value reads in a group.
fn read_through_views(
    g: &NdGraph,
    views_from: &HashMap<String, Vec<TxValue>>,
) -> HashMap<String, TxValue> {
    let mut read_by: HashMap<&str, usize> = HashMap::default();
    for n in &g.nodes {
        for e in &n.inputs {
            *read_by.entry(e.name.as_str()).or_default() += 1;
        }
    }
    let only_view = |name: &str| match views_from.get(name) {
        Some(ws) if ws.len() == 1 && read_by.get(name) == Some(&1) => Some(&ws[0]),
        _ => None,
    };
    let mut through = HashMap::default();
    for name in views_from.keys() {
        let Some(mut w) = only_view(name) else {
            continue;
        };
        for _ in 0..views_from.len() {
            match only_view(&w.name) {
                Some(next) => w = next,
                None => break,
            }
        }
        through.insert(name.clone(), w.clone());
    }
    through
}

/// When a value is held in a group's local memory: from the member that writes or first
/// reads it to the last that reads it (a weight a cut group holds: the whole group), and
/// the bytes of a lane it takes.
#[derive(Debug, Clone, Copy)]
struct Span {
    first: usize,
    last: usize,
    bytes: u64,
}

/// One member of a group: its loads, compute and stores, in cycles.
#[derive(Debug, Clone, Copy, Default)]
struct Step {
    load: f64,
    compute: f64,
    store: f64,
    /// The first slice's loads: a slice of each cut value, all of one held whole.
    first_load: f64,
    /// The first slice's stores.
    first_store: f64,
}

/// A group as TPU-MLIR's allocator sees it (`Ctx::tpu_mlir_allocates`): its buffers,
/// each value's once, and its ops in order.
#[derive(Default)]
struct GroupModel<'v> {
    bufs: Vec<GroupBuf>,
    /// Each value's buffer, by the value's name.
    index: HashMap<&'v str, usize>,
    ops: Vec<GroupOp>,
    /// Whether an activation read whole in every slice (`TxValue::held`) is held as a
    /// weight is, loaded once.
    holds_read_whole: bool,
}

impl<'v> GroupModel<'v> {
    /// The buffer of `v` (one slice of it when `cut` cuts it), made on first sight.
    fn value(&mut self, ctx: &Ctx<'_>, v: &'v TxValue, cut: Slicing) -> usize {
        if let Some(&b) = self.index.get(v.name.as_str()) {
            return b;
        }
        self.bufs.push(GroupBuf {
            kind: if v.weight {
                BufKind::Weight
            } else {
                BufKind::Activation
            },
            hold: (v.weight || (self.holds_read_whole && v.held)) && !cut.cuts(v),
            size: ctx.lane_bytes_in(cut.part_shape(v), ctx.bits_of(v)),
            loaded_for: None,
            stored_after: None,
            dma_cycles: 0,
        });
        self.index.insert(v.name.as_str(), self.bufs.len() - 1);
        self.bufs.len() - 1
    }

    /// An op's scratch buffer of `bytes`.
    fn scratch(&mut self, bytes: u64) -> usize {
        self.bufs.push(GroupBuf {
            kind: BufKind::Operation,
            hold: false,
            size: bytes,
            loaded_for: None,
            stored_after: None,
            dma_cycles: 0,
        });
        self.bufs.len() - 1
    }

    /// Buffer `b` loaded before the next op, unless it already is.
    fn load(&mut self, b: usize, cycles: f64) {
        if self.bufs[b].loaded_for.is_none() {
            self.bufs[b].loaded_for = Some(self.ops.len());
            self.bufs[b].dma_cycles = cycles.round() as i64;
        }
    }

    /// Buffer `b` stored after the last op.
    fn store(&mut self, b: usize, cycles: f64) {
        self.bufs[b].stored_after = Some(self.ops.len().saturating_sub(1));
        self.bufs[b].dma_cycles = cycles.round() as i64;
    }

    fn op(
        &mut self,
        operands: Vec<usize>,
        results: Vec<usize>,
        imm: Option<usize>,
        inplace: bool,
        cycles: i64,
    ) {
        self.ops.push(GroupOp {
            operands,
            results,
            imm,
            inplace,
            cycles,
        });
    }
}

/// The group at the fewest slices in `lo..=hi` that fits, as `at` cuts and measures it
/// (`None`: it does not fit); a binary search, as more slices never need more room.
fn fewest(mut lo: u64, mut hi: u64, at: impl Fn(u64) -> Option<NdGroup>) -> Option<NdGroup> {
    let mut best = at(hi)?;
    while lo < hi {
        let mid = (lo + hi) / 2;
        match at(mid) {
            Some(g) => {
                best = g;
                hi = mid;
            }
            None => lo = mid + 1,
        }
    }
    Some(best)
}

/// Cycles of a group cut in `secs` slices, its members' transfers and compute over all
/// slices `steps`: its first slice run as a whole group, each member's loads (the
/// weights the group holds among them) as it comes to them and under the compute
/// before; then the other slices, their compute and transfers under each other. TPU-MLIR's bm1688 run of
/// llama_d1024_s256's o_proj, residual add and RMSNorm in 2 C slices took 438,637 cycles:
/// its 2 MiB weight's load (125,829 at the group rate) ahead of the matmul's 262,144.
/// A first estimate, before the time steps ([`Ctx::pipelined_cycles`]) replace it, and
/// the time of a group of fewer than two ops besides its permutes.
fn sliced_group_cycles(steps: &[Step], secs: u64) -> f64 {
    let share = 1.0 / secs.max(1) as f64;
    let dma: f64 = steps.iter().map(|s| s.load + s.store).sum();
    let compute: f64 = steps.iter().map(|s| s.compute).sum();
    let first: Vec<Step> = steps
        .iter()
        .map(|s| Step {
            load: s.first_load,
            compute: s.compute * share,
            store: s.first_store,
            ..Step::default()
        })
        .collect();
    let first_dma: f64 = first.iter().map(|s| s.load + s.store).sum();
    let rest = (dma - first_dma).max(0.0);
    first_slice_cycles(&first) + (compute * (1.0 - share)).max(rest)
}

/// Cycles of the first slice of a cut group (no slice's transfers hide behind another's
/// compute): its loads in order on the transfer engine, as early as they can go; each
/// member computing once its loads are in and the member before it is done; the stores
/// after the loads, each once its member is done.
fn first_slice_cycles(steps: &[Step]) -> f64 {
    let (mut dma, mut tiu) = (0f64, 0f64);
    let mut done = Vec::with_capacity(steps.len());
    for s in steps {
        dma += s.load;
        tiu = tiu.max(dma) + s.compute;
        done.push(tiu);
    }
    for (s, &ready) in steps.iter().zip(&done) {
        if s.store > 0.0 {
            dma = dma.max(ready) + s.store;
        }
    }
    dma.max(tiu)
}

/// TPU-MLIR's NCHW view of a value in local memory: a matmul's weight [K, N] as C = K
/// planes of N; an activation [a, b] as N = a, C = b; [a, b, c] as N = a, C = b, H = c;
/// higher ranks with the rest folded into W. A weight of three or more dims is an
/// element-wise layer's, reshaped to its output's rank (`nd_form`), and laid out as an
/// activation.
fn nchw(v: &TxValue) -> Shape4 {
    let d = &v.dims;
    let tail = |from: usize| {
        d.get(from..)
            .map_or(1, |r| r.iter().product::<u64>().max(1))
    };
    if v.weight && d.len() <= 2 {
        let (last, rest) = d
            .split_last()
            .map_or((1, 1), |(&l, r)| (l, r.iter().product::<u64>().max(1)));
        return Shape4::new(1, rest, last, 1);
    }
    match d.len() {
        0 => Shape4::new(1, 1, 1, 1),
        1 => Shape4::new(1, d[0], 1, 1),
        2 => Shape4::new(d[0], d[1], 1, 1),
        3 => Shape4::new(d[0], d[1], d[2], 1),
        _ => Shape4::new(d[0], d[1], d[2], tail(3)),
    }
}

/// Outputs of `g`'s Transpose nodes that none of `layers` writes, by name.
fn folded_transposes(g: &NdGraph, layers: &[TxLayer]) -> HashMap<String, TxValue> {
    let written: HashSet<&str> = layers
        .iter()
        .flat_map(|l| l.writes.iter().map(|v| v.name.as_str()))
        .collect();
    g.nodes
        .iter()
        .filter(|n| n.op_type == "Transpose")
        .flat_map(|n| n.outputs.first().map(|o| (o, &n.out_dims)))
        .filter(|(o, _)| !written.contains(o.as_str()))
        .map(|(o, dims)| (o.clone(), TxValue::activation(o.clone(), dims.clone())))
        .collect()
}

/// The value `name` views, through every view between (itself where it is no view).
fn view_root<'n>(
    views: &'n std::collections::HashMap<String, (String, bool)>,
    mut name: &'n str,
) -> &'n str {
    while let Some((up, _)) = views.get(name) {
        name = up;
    }
    name
}

/// A global layer's cost with a global Permute before it for each folded transpose it
/// reads: TPU-MLIR runs the transpose so where the layer reading it is global
/// (llama_d512_s96_b3's attention output before its global output projection on bm1688:
/// a `tpu.Permute` of [3, 96, 8, 64] taking 22,408 cycles), and by permuting the load
/// where that layer is in a group ([`Ctx::view_input_load`]).
fn with_global_permutes<'v>(
    mut cost: crate::GlobalOpCost,
    permuted: impl Iterator<Item = &'v TxValue>,
    bits: u32,
    t: &Timing,
) -> crate::GlobalOpCost {
    for v in permuted {
        let cycles = crate::nd_global::permuted_copy_cycles(t, v, bits);
        let rounded = cycles.ceil() as u64;
        let bytes = crate::nd_global::bytes_of(v.elements(), bits);
        cost.cycles = cost.cycles.saturating_add(rounded);
        cost.dma_cycles = cost.dma_cycles.saturating_add(rounded);
        cost.bytes = cost.bytes.saturating_add(bytes.saturating_mul(2));
    }
    cost
}

/// The planes of each of `nsecs` N slices of `n`, as TPU-MLIR cuts N
/// ([`crate::range::split`]: the larger first); at most one slice a plane.
fn n_slices(n: u64, nsecs: u64) -> Vec<u64> {
    let parts = nsecs.clamp(1, n.max(1));
    (0..parts)
        .filter_map(|i| crate::range::split(n, parts, i))
        .map(|[a, b]| b - a)
        .collect()
}

/// The sizes TPU-MLIR 1.30.2 cuts `total` into for `secs` slices along C: each the even
/// share rounded up to a multiple of `align` (the lanes), the last what is left
/// (gpt2_d576_s200_b2's 200 rows in 4 C slices on bm1684x: 64, 64, 64 and 8; in 2:
/// 128 and 72), so there may be fewer than `secs`.
fn tpu_mlir_slices(total: u64, secs: u64, align: u64) -> Vec<u64> {
    let share = total.div_ceil(secs.max(1));
    let size = share
        .checked_next_multiple_of(align.max(1))
        .unwrap_or(share)
        .max(1);
    let mut left = total;
    let mut out = Vec::new();
    while left > 0 && out.len() < MAX_ND_SLICES as usize {
        out.push(size.min(left));
        left = left.saturating_sub(size);
    }
    if left > 0 {
        // more than the most slices a group takes: the rest in the last
        if let Some(last) = out.last_mut() {
            *last = last.saturating_add(left);
        }
    }
    out
}

/// Element-wise operations a local softmax costs per element on a chip whose file gives
/// no `local_softmax_*` figures ([`local_softmax`] where it does), over the layout's
/// positions as any element-wise layer: TPU-MLIR's bm1684x kernel (max and sum as
/// pooling passes, exp on the SFU, in f32) took 6,788 cycles for [1, 4, 64, 64] scores
/// in a group of llama_d128_s64 (tuned), where a MulConst of the same value takes 127.
/// Held out, gpt2_d512_s32_b4's [4, 8, 32, 32] took 9,867 (this gives 6,784).
pub const SOFTMAX_LOCAL_OPS: f64 = 53.0;

/// Most slices a group is cut into along one axis.
pub const MAX_ND_SLICES: u64 = 64;

/// The axis within a sequence a group's values are cut along (besides the batch, N,
/// which [`Slicing::nsecs`] cuts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    C,
    H,
}

impl Axis {
    /// The dim of a value of 3 dims or more it cuts.
    fn dim(self) -> usize {
        match self {
            Axis::C => 1,
            Axis::H => 2,
        }
    }
}

/// How a group is cut: `nsecs` slices along the batch (N) and, in each, `secs` along
/// `axis` (1 and 1: whole). TPU-MLIR cuts the batch first and then, where a sequence
/// alone does not fit, its C or H as well: llama_d512_s96_b3's attention on bm1688 in
/// 3 N × 2 C slices, llama_d640_s128_b2's rotary block in 2 N × 2 H.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slicing {
    nsecs: u64,
    axis: Axis,
    secs: u64,
    /// The lanes a `GROUP_SMALL_C` group spreads its values' rows over
    /// ([`small_c::is_small_c_group`], [`Ctx::laid_out`]); 0 in any other group.
    small_c_lanes: u64,
}

impl Slicing {
    const WHOLE: Slicing = Slicing::new(1, Axis::C, 1);

    /// `nsecs` N slices, each in `secs` along `axis`, in a group laid out as
    /// [`nchw`] says.
    const fn new(nsecs: u64, axis: Axis, secs: u64) -> Slicing {
        Slicing {
            nsecs,
            axis,
            secs,
            small_c_lanes: 0,
        }
    }

    /// How `g` is cut (along H where it has H slices, else along C).
    fn of(g: &NdGroup) -> Slicing {
        let (axis, secs) = if g.hsecs > 1 {
            (Axis::H, g.hsecs)
        } else {
            (Axis::C, g.csecs)
        };
        Slicing::new(g.nsecs, axis, secs)
    }

    /// The slices a group runs one after another: N slices × slices along the axis.
    fn total(&self) -> u64 {
        self.nsecs.saturating_mul(self.secs)
    }

    /// Whether `v` is cut along the batch: an activation of 3 dims or more (a
    /// heads-as-batch matmul's right operand too: each N slice is one sequence, its K and
    /// V in it), or a weight an element-wise layer broadcasts with more than one row of
    /// it, as along `axis` ([`Slicing::cuts_along_axis`]).
    fn cuts_n(&self, v: &TxValue) -> bool {
        self.nsecs > 1 && v.dims.len() >= 3 && v.dims[0] > 1 && (!v.weight || v.split)
    }

    /// Whether `v` is cut along `axis`: a value of 3 dims or more. Weights are held
    /// whole but those an element-wise binary layer broadcasts (`TxValue::split`) with
    /// more than one row along the axis (TPU-MLIR loads llama_d320_s256's cos table
    /// [1, 1, 256, 64] in the group's two H slices, reloading it every slice).
    fn cuts_along_axis(&self, v: &TxValue) -> bool {
        let at = self.axis.dim();
        self.secs > 1
            && v.dims.len() >= 3
            && !v.held
            && (!v.weight || (v.split && v.dims.get(at).is_some_and(|&d| d > 1)))
    }

    /// Whether `v` is cut at all.
    fn cuts(&self, v: &TxValue) -> bool {
        self.cuts_n(v) || self.cuts_along_axis(v)
    }

    /// The NCHW shape of one slice of `v` ([`Slicing::part`] without building it: a cut
    /// value has 3 dims or more, whose first three are its N, C and H).
    fn part_shape(&self, v: &TxValue) -> Shape4 {
        let mut s = nchw(v);
        if self.cuts_n(v) {
            s.n = s.n.div_ceil(self.nsecs);
        }
        if self.cuts_along_axis(v) {
            let cut = |d: u64| d.div_ceil(self.secs);
            match self.axis {
                Axis::C => s.c = cut(s.c),
                Axis::H => s.h = cut(s.h),
            }
        }
        self.laid_out(v, s)
    }

    /// `s`, a slice of `v` in [`nchw`]'s layout, as the group holds it: in a
    /// `GROUP_SMALL_C` group an activation's rows over the lanes
    /// ([`crate::timestep::small_c_dims`]).
    fn laid_out(&self, v: &TxValue, s: Shape4) -> Shape4 {
        if self.small_c_lanes == 0 || v.weight {
            return s;
        }
        let (n, c, h, w) = crate::timestep::small_c_dims(s.n, s.c, s.h, s.w, self.small_c_lanes);
        Shape4::new(n, c, h, w)
    }

    /// The NCHW shape of `v` whole, as the group holds it.
    fn whole_shape(&self, v: &TxValue) -> Shape4 {
        self.laid_out(v, nchw(v))
    }

    /// One slice of `v`: its dims divided by the slices, rounded up.
    fn part(&self, v: &TxValue) -> TxValue {
        if !self.cuts(v) {
            return v.clone();
        }
        let mut dims = v.dims.clone();
        if self.cuts_n(v) {
            dims[0] = dims[0].div_ceil(self.nsecs);
        }
        if self.cuts_along_axis(v) {
            let at = self.axis.dim();
            dims[at] = dims[at].div_ceil(self.secs);
        }
        TxValue { dims, ..v.clone() }
    }

    /// The slices of `v` as `cut` makes them, each distinct shape with how many slices
    /// have it: TPU-MLIR cuts N the larger first ([`n_slices`]: 3 sequences in 2 slices
    /// are 2 and 1), so there are at most two; along the axis each slice is the even
    /// share rounded up ([`Slicing::part_shape`]). As many slices as [`Slicing::count`],
    /// or fewer where N has fewer planes than slices.
    fn slice_shapes(&self, v: &TxValue) -> [(Shape4, u64); 2] {
        let part = self.part_shape(v);
        // a small-C group's rows over the lanes: its N slices taken as even
        if !self.cuts_n(v) || self.small_c_lanes > 0 {
            return [(part, self.count(v)), (part, 0)];
        }
        let n = nchw(v).n;
        let parts = self.nsecs.clamp(1, n.max(1));
        let (small, larger) = (n / parts, n % parts);
        [
            (
                Shape4 {
                    n: small + 1,
                    ..part
                },
                larger * self.secs,
            ),
            (Shape4 { n: small, ..part }, (parts - larger) * self.secs),
        ]
    }

    /// The sum of `f` over the slices of `v` ([`Slicing::slice_shapes`]): the cycles of
    /// a layer writing `v` that runs once a slice. TPU-MLIR's bm1688 grouping of
    /// bert_d288_s160_b3 (batch 3 in 2 N slices) took 336,978 cycles of GELU and 113,586
    /// of softmax, 0.98 and 0.99 of the slices of 2 and 1 sequences priced each (4/3 of
    /// it where every slice was priced as the larger).
    fn over_slices(&self, v: &TxValue, f: impl Fn(Shape4) -> f64) -> f64 {
        self.slice_shapes(v)
            .iter()
            .filter(|(_, times)| *times > 0)
            .map(|&(s, times)| f(s) * times as f64)
            .sum()
    }

    /// How much more than the mean slice of `v` its largest (first) slice holds: TPU-MLIR
    /// cuts N the larger first, and estimates a cut group's time steps at that slice
    /// (bert_d320_s112_b3's matmuls forced into 2 N slices of its 3 sequences on bm1688:
    /// 25,760 cycles, 2 sequences' worth; 12,960 in 3).
    fn largest_share(&self, v: &TxValue) -> f64 {
        if !self.cuts_n(v) {
            return 1.0;
        }
        let n = nchw(v).n.max(1);
        let parts = self.nsecs.clamp(1, n);
        (n.div_ceil(parts) * parts) as f64 / n as f64
    }

    /// [`Slicing::over_slices`] a slice: what a slice of the loop takes on average, as
    /// TPU-MLIR's time steps run one slice after another.
    fn mean_over_slices(&self, v: &TxValue, f: impl Fn(Shape4) -> f64) -> f64 {
        let slices: u64 = self.slice_shapes(v).iter().map(|&(_, times)| times).sum();
        self.over_slices(v, f) / slices.max(1) as f64
    }

    /// Transfers of `v`: one per slice when it is cut (a value cut along one axis of a
    /// group cut along two is moved again in every slice), else one.
    fn count(&self, v: &TxValue) -> u64 {
        if self.cuts(v) {
            self.total()
        } else {
            1
        }
    }
}

/// Whether `l`'s values can be cut along `axis` and each slice computed alone: every
/// element-wise layer; a layer that reduces or moves along the last dim (a norm, a
/// softmax, a slice or concat of rotary halves) along an axis that is not the last dim's
/// (of [b, s, d]: C only; of 4-D values: C and H); a weight matmul along its rows; a
/// heads-as-batch matmul along its queries (C).
fn slices_along(l: &TxLayer, axis: Axis) -> bool {
    let Some(out) = l.writes.first() else {
        return false;
    };
    let rank = out.dims.len();
    // a fused attention head may be cut along the batch alone (its `AllowDataSplit`),
    // which is not modelled
    if rank < 3 || l.head.is_some() {
        return false;
    }
    // an activation broadcast against another (rotary's cos/sin tables over the heads):
    // TPU-MLIR compiles such a group whole, but cut in H slices it refuses it
    // (llama_d320_s256's rotary: "load_gather_11_0_2_f16 does not dominate this use")
    let lead = |v: &TxValue| v.dims[..v.dims.len().saturating_sub(1)].to_vec();
    // (a concat's or slice's pieces differ from its output along their axis, not by 1s)
    let stretched = |v: &TxValue| {
        v.dims.len() != out.dims.len()
            || v.dims.iter().zip(&out.dims).any(|(&a, &b)| a == 1 && b > 1)
    };
    // an operand of one channel, cut along C, is whole in every slice: TPU-MLIR's own
    // bm1688 group of bert_d256_s384 adds the padding mask [1, 1, 1, 384] to the scores
    // [1, 4, 384, 384] in 4 C slices
    let whole_in_every_c_slice =
        |v: &TxValue| axis == Axis::C && v.dims.len() == out.dims.len() && v.dims[1] == 1;
    let broadcast = l.reads.iter().filter(|v| !v.weight).any(|v| match l.work {
        Work::Matmul { .. } => lead(v) != lead(out),
        _ => stretched(v) && !whole_in_every_c_slice(v),
    });
    if broadcast {
        return false;
    }
    let along_rows = match axis {
        Axis::C => true,
        Axis::H => rank >= 4,
    };
    match (l.work, l.op_type.as_str()) {
        // fused into the load or store, a slice at a time (TPU-MLIR's bm1688 rotary group
        // of llama_d320_s256, in 2 H slices, loads Q through its permute 81,920 bytes a
        // slice)
        (_, "Permute") => true,
        (Work::Matmul { weight: true, .. }, _) => along_rows,
        // the heads as a batch: along the queries (C), the right operand held whole
        (Work::Matmul { .. }, _) => l.heads_as_batch && axis == Axis::C,
        (
            _,
            "Add" | "Sub" | "Mul" | "Div" | "Where" | "Neg" | "Cast" | "SiLU" | "Sigmoid" | "Tanh"
            | "Relu" | "Erf" | "Abs" | "Log" | "Exp" | "MulConst" | "Pow" | "Sqrt" | "Reciprocal",
        ) => true,
        _ => along_rows,
    }
}

/// Whether `l` is an element-wise layer of two operands (not one of a constant, folded
/// into it as TPU-MLIR's AddConst or MulConst are), which TPU-MLIR runs as a binary AR.
fn binary(l: &TxLayer) -> bool {
    matches!(
        l.op_type.as_str(),
        "Add" | "Sub" | "Mul" | "Div" | "Max" | "Min"
    ) && l.reads.len() == 2
}

/// Whether `members` hold fewer than two layers besides the permutes at their edges (a
/// permute fused into the load or store of a group of one layer would export a group
/// of one op).
fn too_few(members: &[TxLayer]) -> bool {
    members.iter().filter(|l| l.op_type != "Permute").count() < 2
}

/// Whether a layer may join a group. Not one that reads or writes an activation of at
/// most two dims: in local memory TPU-MLIR lays it out one element a plane, and groups
/// it never does in the zoo (gpt2_d64_s64's 2-D GELU chain, grouped on bm1688, compiled
/// to 2.1× TPU-MLIR's cycles where our transfer floors priced it cheap).
fn groupable(l: &TxLayer) -> bool {
    let flat = l
        .reads
        .iter()
        .chain(&l.writes)
        .any(|v| !v.weight && v.dims.len() <= 2);
    if flat {
        return false;
    }
    match l.work {
        Work::Matmul { weight, .. } => weight || l.heads_as_batch,
        Work::Vector { .. } => true,
        Work::Move => matches!(
            l.op_type.as_str(),
            "Cast" | "Slice" | "Split" | "Concat" | "Permute"
        ),
        Work::Free => false,
    }
}

/// Plan `g` on `chip` in `dtype`: the cheapest runs of layers, each a group or a global
/// layer.
pub fn plan_nd_graph(g: &NdGraph, chip: &NpuChip, dtype: ElementType) -> Result<NdPlan> {
    let layers = lower_on(g, chip, dtype);
    let ctx = Ctx::new(g, &layers, chip, dtype)?;
    let n = layers.len();
    // best[i]: cheapest cycles of layers 0..i, and the run that ends there
    let mut best: Vec<(u64, Option<NdGroup>)> = vec![(0, None); n + 1];
    for end in 1..=n {
        let single = ctx.global(end - 1);
        let alone = best[end - 1].0.saturating_add(single.cycles);
        // a global permute the run before would fuse into its store is not an option
        let fused = best[end - 1]
            .1
            .as_ref()
            .is_some_and(|run| ctx.fuses_beside(end - 1, run));
        let mut pick = (if fused { u64::MAX } else { alone }, single.clone());
        for start in (end.saturating_sub(MAX_ND_GROUP_LAYERS)..end.saturating_sub(1)).rev() {
            if !groupable(&layers[start]) {
                break;
            }
            // a permute a run cannot fuse may fuse into the store of a longer one
            // (llama's V, through its Reshape, once the run holds V's matmul)
            if !ctx.permutes_at_edges(start, end) {
                continue;
            }
            // nor a run after a global permute it would fuse into its load
            let after_permute = best[start].1.as_ref().is_some_and(|before| {
                before.end - before.start == 1
                    && ctx.fuses_beside(start - 1, &untimed_run(start, end))
            });
            if after_permute {
                continue;
            }
            // a run that fits no slicing only grows by reaching further back; one
            // that cannot beat the pick is not timed
            let budget = pick.0.saturating_sub(best[start].0);
            let grp = match ctx.group_within(start, end, budget) {
                Some(Candidate::Timed(grp)) => grp,
                Some(Candidate::Slower) => continue,
                None if too_few(&layers[start..end]) => continue,
                None => break,
            };
            let total = best[start].0.saturating_add(grp.cycles);
            if total < pick.0 {
                pick = (total, grp);
            }
        }
        if pick.0 == u64::MAX {
            // nothing else fits: the permute global after all
            pick = (alone, single);
        }
        best[end] = (pick.0, Some(pick.1));
    }
    let mut groups = Vec::new();
    let mut end = n;
    while end > 0 {
        let Some(grp) = best[end].1.clone() else {
            return Err(PlanError::Invalid(format!(
                "transformer plan: no run ends at layer {end}"
            )));
        };
        end = grp.start;
        groups.push(grp);
    }
    groups.reverse();
    finish(&ctx, chip, groups)
}

/// A run of layers `start..end` held whole, untimed (what [`Ctx::fuses_beside`] looks
/// at; a global layer with its costs added).
fn untimed_run(start: usize, end: usize) -> NdGroup {
    NdGroup {
        start,
        end,
        nsecs: 1,
        csecs: 1,
        hsecs: 1,
        lane_bytes: 0,
        load_bytes: 0,
        store_bytes: 0,
        compute_cycles: 0,
        dma_cycles: 0,
        cycles: 0,
    }
}

fn finish(ctx: &Ctx, chip: &NpuChip, groups: Vec<NdGroup>) -> Result<NdPlan> {
    let timed = crate::nd_global::timed_layers(ctx.layers, &ctx.costs);
    let sum = |it: &mut dyn Iterator<Item = u64>| it.fold(0u64, u64::saturating_add);
    let cycles = sum(&mut groups.iter().map(|g| g.cycles));
    let ungrouped = sum(&mut ctx.costs.iter().map(|c| c.cycles));
    Ok(NdPlan {
        chip: chip.geometry.name.clone(),
        dtype_bits: ctx.bits,
        clock_hz: ctx.t.used.clock_hz,
        lane_bytes: ctx.lane_bytes,
        layers: timed,
        groups,
        cycles,
        ungrouped_cycles: ungrouped,
        seconds: cycles as f64 / ctx.t.used.clock_hz.max(1.0),
    })
}

/// [`plan_nd_graph`], then [`verify_nd_plan`] on what it made (what `tpusim plan` and
/// `report` on an NPU, and Python's `tpusim.plan`, run).
pub fn plan_verified(g: &NdGraph, chip: &NpuChip, dtype: ElementType) -> Result<NdPlan> {
    let plan = plan_nd_graph(g, chip, dtype)?;
    verify_nd_plan(g, chip, dtype, &plan)?;
    Ok(plan)
}

/// The JSON document of a planned transformer: the graph's name, its bound inputs, its
/// parameters, the plan, the output projections of the attentions TPU-MLIR 1.30.2
/// fuses into `tpu.Attention` on the plan's chip, and of those the ones the plan does not
/// model ([`crate::tpumlir::nd_fusion`]; the others are its heads, `nd_fused`), and the
/// nodes TPU-MLIR cannot convert at all ([`crate::tpumlir::nd_unconvertible`]).
pub fn plan_document(g: &NdGraph, plan: &NdPlan) -> serde_json::Value {
    use crate::tpumlir::nd_fusion::{fused_attentions, unmodelled_attentions};
    serde_json::json!({
        "model": g.name,
        "inputs": g.inputs,
        "parameters": g.parameters,
        "plan": plan,
        "tpu_mlir_fused_attentions": fused_attentions(g, &plan.chip),
        "tpu_mlir_unmodelled_attentions":
            unmodelled_attentions(g, &plan.chip, plan.dtype_bits),
        "tpu_mlir_unconvertible_nodes":
            crate::tpumlir::nd_unconvertible::unconvertible_nodes(g),
    })
}

/// Check `plan` against `g` on `chip` in `dtype` from scratch: its runs cover every
/// layer of the graph's TPU-MLIR form once and in order, each group holds only layers
/// that may be grouped and fits a lane, and every run's cycles and the total are what
/// the model gives. The first thing wrong, named.
pub fn verify_nd_plan(
    g: &NdGraph,
    chip: &NpuChip,
    dtype: ElementType,
    plan: &NdPlan,
) -> Result<()> {
    let layers = lower_on(g, chip, dtype);
    let ctx = Ctx::new(g, &layers, chip, dtype)?;
    verify_runs(&ctx, plan, |grp| {
        if grp.end - grp.start == 1 {
            Some(ctx.global(grp.start))
        } else {
            ctx.group(grp.start, grp.end)
        }
    })
}

/// Check `plan`'s runs against `ctx`'s layers: they cover every layer once and in order,
/// each is what `expect` makes of its layers (`None`: a group that may not be), and
/// the cycles add up.
fn verify_runs(
    ctx: &Ctx,
    plan: &NdPlan,
    expect: impl Fn(&NdGroup) -> Option<NdGroup>,
) -> Result<()> {
    let layers = ctx.layers;
    let bad = |what: String| Err(PlanError::Invalid(format!("transformer plan: {what}")));
    if plan.layers.len() != layers.len() {
        return bad(format!(
            "{} layers, the graph has {}",
            plan.layers.len(),
            layers.len()
        ));
    }
    let mut next = 0;
    let mut total = 0u64;
    for (k, grp) in plan.groups.iter().enumerate() {
        if grp.start != next || grp.end <= grp.start || grp.end > layers.len() {
            return bad(format!(
                "run {k} covers layers {}..{}, expected to start at {next}",
                grp.start, grp.end
            ));
        }
        match expect(grp) {
            None => {
                let l = &layers[grp.start..grp.end];
                return match l.iter().find(|l| !groupable(l)) {
                    Some(x) => bad(format!(
                        "group {k} holds {} ({}), which runs only as a global layer",
                        x.name, x.op_type
                    )),
                    None => bad(format!(
                        "group {k} (layers {}..{}) does not fit a lane of {} bytes",
                        grp.start, grp.end, ctx.lane_bytes
                    )),
                };
            }
            Some(e) if e != *grp => {
                return bad(format!("run {k}: {grp:?}, the model gives {e:?}"));
            }
            Some(_) => {}
        }
        total = total.saturating_add(grp.cycles);
        next = grp.end;
    }
    if next != layers.len() {
        return bad(format!("the runs end at layer {next} of {}", layers.len()));
    }
    if total != plan.cycles {
        return bad(format!(
            "{} cycles in all, the runs add up to {total}",
            plan.cycles
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpusim_graph::nd::{import_onnx, Bind};

    fn zoo(net: &str) -> NdGraph {
        let path = format!(
            "{}/tests/data/tx_zoo/{net}_static.onnx",
            env!("CARGO_MANIFEST_DIR")
        );
        let bind = Bind {
            batch: 1,
            seq: 1,
            past: 0,
        };
        import_onnx(&std::fs::read(path).unwrap(), &bind).unwrap()
    }

    /// The local cycles of the first layer of `op_type` whose output has `dims`, in
    /// `net`'s form on `chip`, held whole.
    fn local(net: &str, chip: &str, op_type: &str, dims: &[u64]) -> f64 {
        local_cut(net, chip, op_type, dims, Slicing::WHOLE)
    }

    /// [`local`] in a group cut by `cut`: every slice's cycles.
    fn local_cut(net: &str, chip: &str, op_type: &str, dims: &[u64], cut: Slicing) -> f64 {
        let g = zoo(net);
        let chip = NpuChip::preset(chip).unwrap();
        let layers = lower_on(&g, &chip, ElementType::F16);
        let ctx = Ctx::new(&g, &layers, &chip, ElementType::F16).unwrap();
        let i = layers
            .iter()
            .position(|l| l.op_type == op_type && l.writes[0].dims == dims)
            .unwrap_or_else(|| panic!("no {op_type} of {dims:?} in {net}"));
        ctx.local_compute(i, cut)
    }

    /// A binary layer's AR passes over at least two N of its slice, after broadcasting an
    /// operand of one channel to every lane: the cycles TPU-MLIR 1.30.2's profiles give
    /// llama_d640_s128_b2's rotary Mul (by the cos table) and residual Add.
    #[test]
    fn binary_layers_pass_over_two_sequences_at_least() {
        let net = "llama_d640_s128_b2";
        let n_by = Slicing::new;
        // bm1684x, held whole (N = 2): AR 512 and LANE_BC 256 (the cos plane, 8,192
        // elements at 32 a cycle); the Add [2, 128, 640]: AR 80
        assert_eq!(local(net, "bm1684x", "Mul", &[2, 2, 128, 64]), 768.0);
        assert_eq!(local(net, "bm1684x", "Add", &[2, 128, 640]), 80.0);
        // bm1688 in 2 N slices (N = 1 each): AR 2,048 and LANE_BC 1,024 a slice
        let by_n = n_by(2, Axis::C, 1);
        assert_eq!(
            local_cut(net, "bm1688", "Mul", &[2, 2, 128, 64], by_n),
            6_144.0
        );
        // ... and the residual Add in 2 N × 4 C slices: AR 160 a slice, 1,280 in all,
        // where the same slices of two sequences would take half
        let by_n_c = n_by(2, Axis::C, 4);
        assert_eq!(
            local_cut(net, "bm1688", "Add", &[2, 128, 640], by_n_c),
            1_280.0
        );
        let by_c = n_by(1, Axis::C, 4);
        assert_eq!(local_cut(net, "bm1688", "Add", &[2, 128, 640], by_c), 640.0);
    }

    /// TPU-MLIR cuts C into even shares rounded up to the lanes, the last what is left,
    /// and N into near-even parts.
    #[test]
    fn c_slices_are_whole_lanes_but_the_last() {
        assert_eq!(tpu_mlir_slices(200, 4, 64), vec![64, 64, 64, 8]);
        assert_eq!(tpu_mlir_slices(200, 2, 64), vec![128, 72]);
        assert_eq!(tpu_mlir_slices(200, 3, 64), vec![128, 72]);
        assert_eq!(tpu_mlir_slices(384, 4, 32), vec![96, 96, 96, 96]);
        // N as `range::split` cuts it, the larger first
        assert_eq!(n_slices(3, 2), vec![2, 1]);
        assert_eq!(n_slices(7, 3), vec![3, 2, 2]);
        assert_eq!(n_slices(2, 1 << 40), vec![1, 1]);
        assert_eq!(n_slices(0, 2), Vec::<u64>::new());
        // a hostile slice count: at most MAX_ND_SLICES pieces, every row counted once
        let many = tpu_mlir_slices(1 << 40, 1 << 39, 1);
        assert_eq!(many.len(), MAX_ND_SLICES as usize);
        assert_eq!(many.iter().sum::<u64>(), 1 << 40);
        assert_eq!(tpu_mlir_slices(u64::MAX, 1, 64), vec![u64::MAX]);
    }

    /// A weight matmul in a cut group runs each of TPU-MLIR's slices: gpt2_d576_s200_b2's
    /// FFN up projection [2, 200, 576]·[576, 2304] on bm1684x took 74,880 cycles in 4 C
    /// slices of both sequences (rows 64, 64, 64 and 8: the last slice's 2 · 8 rows
    /// gathered into one pass, 7 passes in all) and 84,672 in 2 N × 2 C (rows 128 and 72:
    /// 8 passes).
    #[test]
    fn a_weight_matmul_runs_tpu_mlirs_slices() {
        let up = |cut| {
            local_cut(
                "gpt2_d576_s200_b2",
                "bm1684x",
                "MatMul",
                &[2, 200, 2304],
                cut,
            )
        };
        let by_c = up(Slicing::new(1, Axis::C, 4));
        let by_n_c = up(Slicing::new(2, Axis::C, 2));
        assert!((by_c / 74_880.0 - 1.0).abs() < 0.03, "{by_c}");
        assert!((by_n_c / 84_672.0 - 1.0).abs() < 0.03, "{by_n_c}");
    }

    /// TPU-MLIR's own groups run a slice, a concat and a cast in local memory as one TIU
    /// pass over what they write (their profiles' AR commands).
    #[test]
    fn copies_in_a_group_take_a_pass_over_what_they_write() {
        // bm1684x: gpt2_d192_s96_b3's Q slice 36 cycles; llama_d320_s256's rotary halves
        // 256 and their concat 512
        assert_eq!(
            local("gpt2_d192_s96_b3", "bm1684x", "Split", &[3, 96, 192]),
            36.0
        );
        assert_eq!(
            local("llama_d320_s256", "bm1684x", "Slice", &[1, 5, 256, 32]),
            256.0
        );
        assert_eq!(
            local("llama_d320_s256", "bm1684x", "Concat", &[1, 5, 256, 64]),
            512.0
        );
        // bm1688: gpt2_d128_s128's head cast to f32, [1, 128, 512], 512 cycles, and its
        // reshape of the heads, [1, 128, 4, 32], 64
        assert_eq!(
            local("gpt2_d128_s128", "bm1688", "Cast", &[1, 128, 512]),
            512.0
        );
        let g = zoo("gpt2_d128_s128");
        let chip = NpuChip::preset("bm1688").unwrap();
        let layers = lower_on(&g, &chip, ElementType::F16);
        let ctx = Ctx::new(&g, &layers, &chip, ElementType::F16).unwrap();
        let heads = TxValue::activation("heads", vec![1, 128, 4, 32]);
        assert_eq!(ctx.element_passes(&heads, Slicing::WHOLE), 64.0);
    }

    proptest::proptest! {
        /// A slice's shape, computed in place, is the shape of the slice built whole.
        #[test]
        fn a_slice_shape_is_that_of_the_slice(
            dims in proptest::collection::vec(1u64..300, 0..6),
            weight in proptest::bool::ANY,
            split in proptest::bool::ANY,
            held in proptest::bool::ANY,
            nsecs in 1u64..5,
            axis in 0usize..2,
            secs in 1u64..9,
        ) {
            let mut v = TxValue::activation("v", dims);
            (v.weight, v.split, v.held) = (weight, split, held);
            let axis = [Axis::C, Axis::H][axis];
            let cut = Slicing::new(nsecs, axis, secs);
            proptest::prop_assert_eq!(cut.part_shape(&v), nchw(&cut.part(&v)));
        }

        /// The slices `over_slices` sums are TPU-MLIR's, built one by one: each N slice
        /// of `n_slices` (or every slice's part where N is not cut) once for each slice
        /// along the axis, at the axis's part.
        #[test]
        fn a_sum_over_slices_takes_each_slice_once(
            dims in proptest::collection::vec(1u64..40, 0..6),
            weight in proptest::bool::ANY,
            split in proptest::bool::ANY,
            nsecs in 1u64..9,
            axis in 0usize..2,
            secs in 1u64..5,
        ) {
            let mut v = TxValue::activation("v", dims);
            (v.weight, v.split) = (weight, split);
            let axis = [Axis::C, Axis::H][axis];
            let cut = Slicing::new(nsecs, axis, secs);
            let part = cut.part_shape(&v);
            let planes = if cut.cuts_n(&v) {
                n_slices(nchw(&v).n, nsecs)
            } else {
                vec![part.n; cut.count(&v) as usize]
            };
            let each = if cut.cuts_n(&v) { secs } else { 1 };
            let one_by_one: Vec<Shape4> = planes
                .iter()
                .flat_map(|&n| std::iter::repeat(Shape4 { n, ..part }).take(each as usize))
                .collect();
            let cost = |s: Shape4| (s.n * 1_000_000 + s.c * 1_000 + s.h + s.w * 7) as f64;
            let naive: f64 = one_by_one.iter().map(|&s| cost(s)).sum();
            proptest::prop_assert_eq!(cut.over_slices(&v, cost), naive);
            let mean = cut.mean_over_slices(&v, cost) * one_by_one.len() as f64;
            proptest::prop_assert!((mean - naive).abs() <= naive * 1e-12);
        }

        /// The mean slice scaled by `largest_share` is the largest slice built one by
        /// one, in sequences: what TPU-MLIR estimates a cut group's time steps at.
        #[test]
        fn the_largest_share_scales_the_mean_slice_to_the_largest(
            dims in proptest::collection::vec(1u64..40, 3..6),
            nsecs in 1u64..9,
            secs in 1u64..5,
        ) {
            let v = TxValue::activation("v", dims);
            let cut = Slicing::new(nsecs, Axis::C, secs);
            let largest = if cut.cuts_n(&v) {
                n_slices(nchw(&v).n, nsecs).into_iter().max().unwrap_or(1)
            } else {
                nchw(&v).n
            };
            let scaled = cut.mean_over_slices(&v, |s| s.n as f64) * cut.largest_share(&v);
            proptest::prop_assert!((scaled - largest as f64).abs() < 1e-9, "{scaled} {largest}");
        }
    }

    /// 3 sequences in 2 N slices are a slice of 2 and one of 1 (TPU-MLIR's bm1688
    /// grouping of bert_d288_s160_b3), 5 in 3 slices of 2, 2 and 1; along C every slice
    /// is the even share rounded up, once for each N slice.
    #[test]
    fn n_slices_are_summed_as_tpu_mlir_cuts_them() {
        let v = TxValue::activation("v", vec![3, 160, 288]);
        let n2 = Slicing::new(2, Axis::C, 1);
        let planes = |s: Shape4| s.n as f64;
        assert_eq!(n2.over_slices(&v, planes), 3.0);
        assert_eq!(n2.mean_over_slices(&v, planes), 1.5);
        let v = TxValue::activation("v", vec![5, 6, 96, 96]);
        let n3c2 = Slicing::new(3, Axis::C, 2);
        assert_eq!(n3c2.over_slices(&v, planes), 10.0);
        assert_eq!(n3c2.over_slices(&v, |s| s.c as f64), 18.0);
        let weight = TxValue {
            weight: true,
            ..TxValue::activation("w", vec![288, 288])
        };
        assert_eq!(n2.over_slices(&weight, |_| 1.0), 1.0);
    }
}
