//! TPU-MLIR's backward slicing of a cut group, where two readers of one value need
//! different parts of it.
//!
//! TPU-MLIR 1.30.2 finds each value's slices by walking a cut group back from what it
//! stores. The right operand of a heads-as-batch matmul (K of Q·Kᵀ, V of P·V) is
//! loaded whole into every slice (`is_matmul_right_tensor`), and so is whatever the
//! group computes it from. When a value is needed whole by one reader and in slices by
//! another, its `backward_update_slice` tries to merge the two ("multi-branch
//! backward"). It merges only H and W margins, and only where every reader's kernel
//! takes margins (a non-grouped conv, an add, a shift; a LUT or cast feeding those) and
//! the value does not leave the group. Otherwise the group is refused.
//!
//! Seen in our bm1688 plan of gpt2_d320_s80_b2 (held out) under the in-group lane-row
//! rule (`Ctx::weight_matmul_in_group`), before this check: the GELU, the FFN down
//! projection, the residual add, the LayerNorm, the Q, K and V projections and Q·Kᵀ in
//! 3 C slices. K's projection reads the LayerNorm's output whole (K is Q·Kᵀ's right
//! operand); Q's reads it in slices, and so does V's, whose output leaves the group.
//! tpuc-opt: "multi-branch backward failed since multi-branch op's user's tpu-kernel is
//! not supported and user is not LutOp or CastOp". TPU-MLIR's own cut groups of the zoo
//! never hold one (`tests/nd_plan.rs`).

use super::Ctx;
use crate::tpumlir::nd_form::TxLayer;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

impl Ctx<'_> {
    /// Whether the group `start..end`, cut in slices, needs a value it computes whole
    /// for one reader and in slices for another, which TPU-MLIR refuses (see the
    /// module's doc).
    pub(super) fn splits_a_shared_value(&self, start: usize, end: usize) -> bool {
        let members = &self.layers[start..end];
        // (most candidate groups read no value whole: nothing to walk back from)
        let reads_whole = members
            .iter()
            .flat_map(|l| &l.reads)
            .any(|v| v.held && !v.weight);
        if !reads_whole {
            return false;
        }
        let writer: HashMap<&str, usize> = members
            .iter()
            .enumerate()
            .flat_map(|(i, l)| l.writes.iter().map(move |v| (v.name.as_str(), start + i)))
            .collect();
        let whole = self.needed_whole(members, &writer);
        if whole.is_empty() {
            return false;
        }
        let outside = |j: &usize| !(start..end).contains(j);
        whole.iter().any(|&name| {
            let readers = self.readers_through_views(name);
            let stored = readers.is_empty() || readers.iter().any(outside);
            let sliced = stored
                || readers
                    .iter()
                    .any(|&j| self.reads_in_slices(j, name) && !self.writes_whole(j, &whole));
            sliced && (stored || !readers.iter().all(|&j| self.takes_margins(j)))
        })
    }

    /// Whether the group `start..end`, cut along the sequence (C or H), computes the
    /// right operand of one of its heads-as-batch matmuls (K or V, needed whole in every
    /// slice) rather than loading it. TPU-MLIR refuses such a group: our bm1688 plan of
    /// bert_d256_s384 (held out) held V's projection and P·V in one group of 4 C slices,
    /// and tpuc-opt stopped with "time step assign failed"; its own cut groups load K and
    /// V (`tests/nd_plan.rs`). A permute is a transfer, not a computation: one fused into
    /// the group's load brings its value in.
    pub(super) fn computes_a_whole_operand(&self, start: usize, end: usize) -> bool {
        let members = &self.layers[start..end];
        let written: HashSet<&str> = members
            .iter()
            .filter(|l| l.op_type != "Permute")
            .flat_map(|l| l.writes.iter().map(|v| v.name.as_str()))
            .collect();
        members
            .iter()
            .flat_map(|l| &l.reads)
            .any(|v| v.held && !v.weight && written.contains(self.viewed(&v.name)))
    }

    /// Whether layer `j` reads `name` (or a view of it) other than whole: not as a
    /// heads-as-batch matmul's right operand.
    fn reads_in_slices(&self, j: usize, name: &str) -> bool {
        self.layers[j]
            .reads
            .iter()
            .any(|v| !v.held && self.viewed(&v.name) == name)
    }

    /// The values the group computes that some slice needs whole: every value a
    /// heads-as-batch matmul reads as its right operand, and, back from those, every
    /// activation a member reads to compute one.
    fn needed_whole<'n>(
        &'n self,
        members: &'n [TxLayer],
        writer: &HashMap<&str, usize>,
    ) -> HashSet<&'n str> {
        let mut stack: Vec<&str> = members
            .iter()
            .flat_map(|l| &l.reads)
            .filter(|v| v.held && !v.weight)
            .map(|v| self.viewed(&v.name))
            .collect();
        let mut whole = HashSet::default();
        while let Some(name) = stack.pop() {
            let Some(&i) = writer.get(name) else {
                continue;
            };
            if whole.insert(name) {
                let reads = self.layers[i].reads.iter().filter(|v| !v.weight);
                stack.extend(reads.map(|v| self.viewed(&v.name)));
            }
        }
        whole
    }

    /// The value `name` views, through any chain of views (itself when not a view).
    pub(super) fn viewed<'n>(&'n self, name: &'n str) -> &'n str {
        super::view_root(&self.views, name)
    }

    /// The layers that read `name` or a view of it.
    pub(super) fn readers_through_views(&self, name: &str) -> Vec<usize> {
        let mut readers: Vec<usize> = self.readers.get(name).cloned().unwrap_or_default();
        for (view, (up, _)) in &self.views {
            if self.viewed(up) == name || up == name {
                readers.extend(self.readers.get(view.as_str()).into_iter().flatten());
            }
        }
        readers.sort_unstable();
        readers.dedup();
        readers
    }

    /// Whether layer `j` computes only values needed whole.
    fn writes_whole(&self, j: usize, whole: &HashSet<&str>) -> bool {
        let writes = &self.layers[j].writes;
        !writes.is_empty() && writes.iter().all(|v| whole.contains(v.name.as_str()))
    }

    /// Whether layer `j`'s kernel takes H and W margins (TPU-MLIR's
    /// `tpukernel_support_HWmargins` on bm1684x and bm1688: a conv of one group, an add,
    /// a shift; of a transformer's layers, an add), or it is a cast whose readers all
    /// do.
    fn takes_margins(&self, j: usize) -> bool {
        let l = &self.layers[j];
        match l.op_type.as_str() {
            "Add" => true,
            "Cast" => l.writes.iter().all(|v| {
                let readers = self.readers_through_views(&v.name);
                !readers.is_empty() && readers.iter().all(|&k| self.layers[k].op_type == "Add")
            }),
            _ => false,
        }
    }
}
