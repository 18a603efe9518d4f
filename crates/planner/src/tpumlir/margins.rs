//! Which values TPU-MLIR 1.30.2 can hand to readers that need different rows of them,
//! in a group cut along H.
//!
//! TPU-MLIR slices a cut group by walking it back from what it stores, one reader at a
//! time. When a second reader of a value (or the value's own stored part) needs other
//! rows of it than the first did, it must merge the two windows into one ("multi-branch
//! backward"), and every reader then gets the merged rows, with margins it has to skip.
//! Only some kernels take an input with margins. A group holding such a value read by
//! any other kernel is refused: "local memory allocate failed for group N", at every H
//! count, however much room is left.
//!
//! What takes margins was found by compiling forced caches of small networks on bm1684x
//! and bm1688, with the same result on both (`bench/tpumlir_margin_cases.py` makes and
//! compiles them; this module's tests restate the cases, and `tests/tpumlir/zoo.rs`
//! pins aspp_like):
//! - compiled: two convs of kernels 1 and 3, or 3 and 5, reading one value; a grouped
//!   conv and a 1×1; a 3×3 conv with an Add, a Mul, a Concat or a BatchNormalization of
//!   the value (TPU-MLIR runs the last as a conv); a stored value read in the group by a
//!   3×3 conv;
//! - refused: a dilated conv beside any conv of another window (aspp_like of the zoo:
//!   dilations 1, 2 and 4 and a 1×1 over one value), a max pool, a LeakyReLU or a cast
//!   (in front of an average pool or a sigmoid) or a transposed conv beside a conv of
//!   another window, and a stored value read in the group by a max pool or a dilated
//!   conv;
//! - compiled again: all of the refused pairs when their windows agree (a dilated conv
//!   of dilation 2 beside a dense 5×5, a 3×3 max pool beside a 3×3 conv), and a dilated
//!   conv reading the value from outside the group.
//!
//! TPU-MLIR's source of later versions names conv, add and shift kernels, and refuses
//! grouped convs; 1.30.2 compiles a grouped conv and refuses a dilated one, so the list
//! here is the one measured, and a kernel not measured counts as not taking margins.

use crate::range::{backward_h, split, Range};
use crate::slicing::{GroupTensors, Slicing};
use tpusim_graph::{Graph, OpKind, TensorId};

/// Whether TPU-MLIR's kernel for `kind` reads an input that carries rows it does not
/// need (the module's doc).
fn takes_margins(kind: &OpKind) -> bool {
    match kind {
        OpKind::Conv(c) => c.dilation == [1, 1],
        // a batch-norm no conv absorbed runs as a conv (TPU-MLIR's `Conv2D`)
        OpKind::BatchNorm | OpKind::Add | OpKind::Mul | OpKind::Concat => true,
        _ => false,
    }
}

/// The rows each value of a group is asked for in one H part: the first window, and
/// whether another differs from it and whether a reader cannot take margins.
#[derive(Debug, Clone, Copy, Default)]
struct Asked {
    first: Option<Range>,
    differs: bool,
    rigid_reader: bool,
}

impl Asked {
    fn window(&mut self, rows: Range) {
        match self.first {
            None => self.first = Some(rows),
            Some(w) if w != rows => self.differs = true,
            Some(_) => {}
        }
    }

    fn refused(&self) -> bool {
        self.differs && self.rigid_reader
    }
}

/// The first value of `gt` that TPU-MLIR cannot give its readers under `slicing`: one
/// asked for in different rows (by two readers, or by a reader and its own stored part)
/// where some reader in the group cannot take margins. `None` when the group is not cut
/// along H or every such value can be merged.
pub(crate) fn unmergeable_value(
    graph: &Graph,
    gt: &GroupTensors,
    slicing: &Slicing,
) -> Option<TensorId> {
    if slicing.hsecs <= 1 {
        return None;
    }
    (0..slicing.hsecs as usize).find_map(|hi| unmergeable_in_part(graph, gt, slicing, hi))
}

/// The value TPU-MLIR could not give its readers if ops `first..=last` of `graph` were
/// one group cut in `nsecs × hsecs` slices (see [`unmergeable_value`]), by name; `None`
/// when the cut is not refused for that reason (or cannot be made at all: too many
/// slices).
pub fn unmergeable_value_of_cut(
    graph: &Graph,
    first: usize,
    last: usize,
    nsecs: u64,
    hsecs: u64,
) -> Option<String> {
    if first > last || last >= graph.ops.len() {
        return None;
    }
    let uses = tpusim_graph::query::Uses::new(graph);
    let gt = GroupTensors::new(graph, &uses, first, last);
    let memo = &mut crate::slicing::NPartsMemo::default();
    let slicing = crate::slicing::slice_group(graph, &gt, nsecs, hsecs, false, memo).ok()?;
    let t = unmergeable_value(graph, &gt, &slicing)?;
    Some(graph.tensors[t].name.clone())
}

fn unmergeable_in_part(
    graph: &Graph,
    gt: &GroupTensors,
    slicing: &Slicing,
    hi: usize,
) -> Option<TensorId> {
    let rows = slicing.h_ranges(hi);
    let mut asked = vec![Asked::default(); gt.all.len()];
    for &t in &gt.escaping {
        if let Some(own) = split(graph.tensors[t].shape.h, slicing.hsecs, hi as u64) {
            asked[gt.pos[&t]].window(own);
        }
    }
    for op in &graph.ops[gt.first..=gt.last] {
        let Some(&o) = op.outputs.first() else {
            continue;
        };
        let Some(&oi) = gt.pos.get(&o) else { continue };
        let h_out = graph.tensors[o].shape.h;
        for &u in &op.inputs {
            let Some(&ui) = gt.pos.get(&u) else { continue };
            let need = backward_h(&op.kind, rows[oi], graph.tensors[u].shape.h, h_out);
            asked[ui].window(need);
            asked[ui].rigid_reader |= !takes_margins(&op.kind);
        }
    }
    asked.iter().position(Asked::refused).map(|i| gt.all[i])
}

#[cfg(test)]
mod tests {
    //! The cases compiled in TPU-MLIR 1.30.2 on bm1684x and bm1688
    //! (`bench/tpumlir_margin_cases.py`, the same result on both):
    //! `x` = a 3×3 conv of the input (32 channels, 64×64), read by the readers named,
    //! whose outputs are concatenated and fed to a 1×1 conv. The group holds `x`'s
    //! readers and what the case names, cut in 2 H slices.
    use super::*;
    use crate::slicing::{slice_group, NPartsMemo};
    use tpusim_graph::query::Uses;
    use tpusim_graph::{ConvParams, Op, PoolParams, Shape4, Tensor, TensorKind};

    #[derive(Clone, Copy)]
    enum Reader {
        Conv { k: u64, dilation: u64, groups: u64 },
        MaxPool3,
        Cast,
        Concat,
        Add3,
        Leaky,
        Bn,
        Deconv3,
    }
    use Reader::*;

    const C: u64 = 32;
    const H: u64 = 64;

    fn conv(k: u64, dilation: u64) -> Reader {
        Conv {
            k,
            dilation,
            groups: 1,
        }
    }

    struct Net {
        g: Graph,
    }

    impl Net {
        fn tensor(&mut self, name: &str, kind: TensorKind) -> TensorId {
            self.g.tensors.push(Tensor {
                name: name.into(),
                shape: Shape4::new(1, C, H, H),
                kind,
                bits: None,
            });
            self.g.tensors.len() - 1
        }

        fn op(&mut self, name: &str, kind: OpKind, inputs: Vec<TensorId>) -> TensorId {
            let y = self.tensor(name, TensorKind::Activation);
            self.g.ops.push(Op {
                name: name.into(),
                kind,
                inputs,
                weights: vec![],
                outputs: vec![y],
                fused_act: None,
                source_type: None,
            });
            y
        }

        fn conv(
            &mut self,
            name: &str,
            x: TensorId,
            k: u64,
            dilation: u64,
            groups: u64,
        ) -> TensorId {
            let p = dilation * (k / 2);
            let params = ConvParams {
                kernel: [k, k],
                stride: [1, 1],
                pad: [p; 4],
                dilation: [dilation; 2],
                groups,
            };
            self.op(name, OpKind::Conv(params), vec![x])
        }

        fn read(&mut self, name: &str, x: TensorId, r: Reader) -> TensorId {
            match r {
                Conv {
                    k,
                    dilation,
                    groups,
                } => self.conv(name, x, k, dilation, groups),
                MaxPool3 => {
                    let p = PoolParams {
                        kernel: [3, 3],
                        stride: [1, 1],
                        pad: [1; 4],
                        ceil_mode: false,
                        count_include_pad: false,
                    };
                    self.op(name, OpKind::MaxPool(p), vec![x])
                }
                Cast => self.op(name, OpKind::Cast, vec![x]),
                Concat => x,
                Add3 => {
                    let y = self.conv(&format!("{name}_conv"), x, 3, 1, 1);
                    self.op(name, OpKind::Add, vec![x, y])
                }
                Leaky => self.op(
                    name,
                    OpKind::Act(tpusim_graph::Activation::LeakyRelu),
                    vec![x],
                ),
                Bn => self.op(name, OpKind::BatchNorm, vec![x]),
                Deconv3 => {
                    let params = ConvParams {
                        kernel: [3, 3],
                        stride: [1, 1],
                        pad: [1; 4],
                        dilation: [1, 1],
                        groups: 1,
                    };
                    let kind = OpKind::Deconv {
                        params,
                        output_pad: [0, 0],
                    };
                    self.op(name, kind, vec![x])
                }
            }
        }
    }

    /// Whether TPU-MLIR can cut the group of `x`'s readers in 2 H slices, with `x`'s
    /// producer in the group too when `with_x`, and `x` read after the group too
    /// (stored) when `stored`.
    fn cut_in_two(readers: &[Reader], with_x: bool, stored: bool) -> bool {
        let mut n = Net {
            g: Graph::default(),
        };
        let input = n.tensor("input", TensorKind::Activation);
        n.g.inputs.push(input);
        let x = n.conv("x", input, 3, 1, 1);
        let mut outs: Vec<TensorId> = readers
            .iter()
            .enumerate()
            .map(|(i, &r)| n.read(&format!("r{i}"), x, r))
            .collect();
        let last = n.g.ops.len() - 1;
        if stored {
            outs.push(x);
        }
        let cat = n.op("cat", OpKind::Concat, outs);
        n.g.outputs.push(cat);
        let first = if with_x { 0 } else { 1 };
        let uses = Uses::new(&n.g);
        let gt = GroupTensors::new(&n.g, &uses, first, last);
        let s = slice_group(&n.g, &gt, 1, 2, false, &mut NPartsMemo::default()).unwrap();
        unmergeable_value(&n.g, &gt, &s).is_none()
    }

    #[test]
    fn readers_of_other_windows_merge_when_every_kernel_takes_margins() {
        assert!(cut_in_two(&[conv(1, 1), conv(3, 1)], false, false));
        assert!(cut_in_two(&[conv(1, 1), conv(3, 1)], true, false));
        assert!(cut_in_two(&[conv(3, 1), conv(5, 1)], false, false));
        let grouped = Conv {
            k: 3,
            dilation: 1,
            groups: 4,
        };
        assert!(cut_in_two(&[conv(1, 1), grouped], false, false));
        assert!(cut_in_two(&[Add3], true, false));
        assert!(cut_in_two(&[conv(3, 1), Concat], true, false));
        assert!(cut_in_two(&[conv(3, 1), Bn], false, false));
    }

    #[test]
    fn a_dilated_conv_pool_or_cast_beside_another_window_is_refused() {
        assert!(!cut_in_two(&[conv(3, 1), conv(3, 2)], false, false));
        assert!(!cut_in_two(&[conv(3, 2), conv(1, 1)], true, false));
        assert!(!cut_in_two(&[conv(7, 1), conv(3, 2)], false, false));
        assert!(!cut_in_two(
            &[conv(1, 1), conv(3, 2), conv(3, 4)],
            false,
            false
        ));
        assert!(!cut_in_two(&[conv(1, 1), MaxPool3], false, false));
        assert!(!cut_in_two(&[conv(3, 1), Cast], true, false));
        assert!(!cut_in_two(&[conv(3, 1), Leaky], false, false));
        assert!(!cut_in_two(&[conv(1, 1), Deconv3], false, false));
    }

    #[test]
    fn the_same_readers_in_one_window_are_not_merged() {
        assert!(cut_in_two(&[conv(3, 2), conv(5, 1)], false, false));
        assert!(cut_in_two(&[conv(3, 2), conv(3, 2)], false, false));
        assert!(cut_in_two(&[conv(3, 2)], true, false));
        assert!(cut_in_two(&[Leaky, Concat], true, false));
        assert!(cut_in_two(&[conv(1, 1), Cast], true, false));
    }

    #[test]
    fn a_stored_value_counts_its_own_rows_as_a_window() {
        assert!(cut_in_two(&[conv(3, 1)], true, true));
        assert!(cut_in_two(&[Leaky], true, true));
        assert!(!cut_in_two(&[conv(3, 2)], true, true));
        assert!(!cut_in_two(&[MaxPool3], true, true));
    }

    #[test]
    fn a_group_not_cut_along_h_is_never_refused() {
        let mut n = Net {
            g: Graph::default(),
        };
        let input = n.tensor("input", TensorKind::Activation);
        n.g.inputs.push(input);
        let x = n.conv("x", input, 3, 1, 1);
        let a = n.conv("a", x, 3, 2, 1);
        let b = n.conv("b", x, 1, 1, 1);
        let cat = n.op("cat", OpKind::Concat, vec![a, b]);
        n.g.outputs.push(cat);
        let uses = Uses::new(&n.g);
        let gt = GroupTensors::new(&n.g, &uses, 0, 3);
        let s = slice_group(&n.g, &gt, 1, 1, false, &mut NPartsMemo::default()).unwrap();
        assert_eq!(unmergeable_value(&n.g, &gt, &s), None);
        let s = slice_group(&n.g, &gt, 1, 2, false, &mut NPartsMemo::default()).unwrap();
        assert_eq!(unmergeable_value(&n.g, &gt, &s), Some(x));
    }
}
