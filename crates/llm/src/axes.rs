//! Sharding degrees and where they sit on a slice: each strategy takes whole axes
//! or a factor of one, innermost first (tensor, tensor over D, sequence, expert, FSDP,
//! data, pipeline), and its collectives run on that sub-slice with the wraparound of the
//! axes it holds whole.

use crate::error::{LlmError, Result};
use serde::Serialize;
use tpusim_chip::Slice;

/// Degrees of parallelism (each 1 when unused; the JSON `sharding` object).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Degrees {
    /// Data parallel over ICI (weights replicated).
    pub dp: u64,
    /// Fully sharded data parallel (ZeRO-3) over ICI.
    pub fsdp: u64,
    /// Tensor (model) parallel, Megatron style: weights sharded over the hidden
    /// dimension F (and the attention heads).
    pub tp: u64,
    /// Tensor parallel over the model dimension D too: the book's 2-D
    /// weight-stationary sharding (Part 7, from the ESTI paper), `tp` its Y·Z axes and
    /// `tp_d` its X axis; weights sharded over `tp · tp_d` chips.
    pub tp_d: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Expert parallel (MoE).
    pub ep: u64,
    /// Sequence (context) parallel.
    pub sp: u64,
    /// Data parallel across slices over DCN.
    pub dcn_dp: u64,
    /// Fully sharded data parallel across slices over DCN (MaxText's
    /// `dcn_fsdp_parallelism`): the model state sharded over the slices too.
    pub dcn_fsdp: u64,
}

impl Default for Degrees {
    fn default() -> Self {
        Degrees {
            dp: 1,
            fsdp: 1,
            tp: 1,
            tp_d: 1,
            pp: 1,
            ep: 1,
            sp: 1,
            dcn_dp: 1,
            dcn_fsdp: 1,
        }
    }
}

impl Degrees {
    /// Chips of one slice the ICI degrees use.
    pub fn ici_chips(&self) -> u64 {
        self.dp * self.fsdp * self.tp * self.tp_d * self.pp * self.ep * self.sp
    }

    /// `dp=2 fsdp=4 …`, unused degrees left out.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .named()
            .iter()
            .filter(|(_, d)| *d > 1)
            .map(|(n, d)| format!("{n}={d}"))
            .collect();
        if parts.is_empty() {
            "none (one chip)".into()
        } else {
            parts.join(" ")
        }
    }

    /// (name, degree) of every strategy, in placement order, then DCN.
    pub fn named(&self) -> [(&'static str, u64); 9] {
        [
            ("tp", self.tp),
            ("tp_d", self.tp_d),
            ("sp", self.sp),
            ("ep", self.ep),
            ("fsdp", self.fsdp),
            ("dp", self.dp),
            ("pp", self.pp),
            ("dcn_dp", self.dcn_dp),
            ("dcn_fsdp", self.dcn_fsdp),
        ]
    }
}

/// One strategy's share of the slice.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// `tp`, `tp_d`, `sp`, `ep`, `fsdp`, `dp` or `pp`.
    pub strategy: &'static str,
    /// Its sub-slice: the axis pieces it holds, wraparound where it holds a
    /// wrapping axis whole.
    pub slice: Slice,
    /// Which axes of the slice it uses.
    pub axes: Vec<usize>,
}

/// Place `deg` on `slice`: each ICI degree takes whole axes or one factor of an
/// axis, in placement order; the degrees must multiply to the slice's chips.
pub fn place(slice: &Slice, deg: &Degrees) -> Result<Vec<Placed>> {
    let wrong = |problem: String| LlmError::BadSharding {
        given: deg.describe(),
        slice: slice.shape(),
        problem,
    };
    if deg.ici_chips() != slice.chips() {
        return Err(wrong(format!(
            "the ICI degrees multiply to {} but the slice has {} chips; dp·fsdp·tp·tp_d·pp·ep·sp must equal {}",
            deg.ici_chips(),
            slice.chips(),
            slice.chips()
        )));
    }
    let mut left: Vec<u64> = slice.dims.iter().map(|&d| u64::from(d)).collect();
    let mut axis = 0usize;
    let mut out = Vec::new();
    for (name, degree) in deg.named().into_iter().take(7) {
        if degree <= 1 {
            continue;
        }
        let mut need = degree;
        let mut dims = Vec::new();
        let mut wrap = Vec::new();
        let mut axes = Vec::new();
        while need > 1 {
            while axis < left.len() && left[axis] == 1 {
                axis += 1;
            }
            let Some(&r) = left.get(axis) else {
                return Err(wrong(format!("no axis left for {name}={degree}")));
            };
            let whole = r == u64::from(slice.dims[axis]);
            let take = if need >= r {
                if need % r != 0 {
                    return Err(wrong(format!(
                        "{name}={degree} takes {r} chips of axis {axis} and {} is not a multiple of {r}; degrees are products of axis sizes or factors of one axis (slice {})",
                        need, slice.shape()
                    )));
                }
                r
            } else {
                if r % need != 0 {
                    return Err(wrong(format!(
                        "{name}={degree} would take {need} of the {r} chips left on axis {axis}, which {need} does not divide"
                    )));
                }
                need
            };
            dims.push(take as u32);
            wrap.push(whole && take == r && slice.wraparound[axis]);
            axes.push(axis);
            left[axis] /= take;
            need /= take;
        }
        out.push(Placed {
            strategy: name,
            slice: Slice {
                chip: slice.chip.clone(),
                dims,
                wraparound: wrap,
            },
            axes,
        });
    }
    Ok(out)
}
