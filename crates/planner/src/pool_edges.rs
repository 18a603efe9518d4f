//! The corrections an average pool makes to its windows over padding, as the NPU's
//! compiler makes them. With ONNX's `count_include_pad = 0`, a window that reaches into
//! the padding divides by its real elements, not the kernel's area. The pooling unit
//! divides every window alike, so the backend then rescales each output row and each
//! output column whose windows reach the padding: one arithmetic command for each
//! (its profiles' `AR` commands after the pool's `PorD`).
//!
//! Timed by TPU-MLIR 1.30.2's codegen profiles of padded average pools
//! (`bench/tpumlir_cnn_op_sweep.py --set pools`, `tests/data/cnn_pool_sweep.jsonl`): a
//! correction takes 2 cycles for each EU row of the pool's type it covers. An output
//! row of one plane is ⌈W / EU_NUM⌉ rows; an output column is one a row.

use tpusim_graph::PoolParams;

/// Cycles a correction command takes for each EU row it covers: 2 on bm1684x and
/// bm1688 (3×3/1 padded on 16 channels of 56² in f32: 8 cycles a row on bm1684x,
/// ⌈56 / 16⌉ EU rows; 112 a column, 56 rows; bm1688 28 and 112).
const CYCLES_PER_EU_ROW: f64 = 2.0;

/// An average pool's part, as its correction commands see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EdgePart {
    /// Lane rows of the output channels (⌈C / NPU_NUM⌉).
    pub lane_rows: f64,
    /// Batches computed.
    pub batches: u64,
    /// Output rows computed.
    pub rows: u64,
    /// The whole output's rows.
    pub out_h: u64,
    /// The whole output's columns.
    pub out_w: u64,
    /// The input's rows and columns (padding not included).
    pub in_hw: [u64; 2],
    /// Elements a cycle of the pool's type (EU_NUM at its width).
    pub eu: f64,
}

/// Cycles of the corrections of `p`'s padded windows for `part`: every output row and
/// column whose windows reach beyond the input (padding, or a `ceil_mode` overhang),
/// none with `count_include_pad`. A slice of the rows takes its share of the row
/// corrections (rows × edge rows / output rows: the shares add up to the whole op) and
/// the column corrections over its own rows.
pub(crate) fn avg_pool_edge_cycles(p: &PoolParams, part: EdgePart) -> f64 {
    if p.count_include_pad {
        return 0.0;
    }
    let edge_rows = edge_outputs(
        part.out_h,
        part.in_hw[0],
        p.kernel[0],
        p.stride[0],
        p.pad[0],
    );
    let edge_cols = edge_outputs(
        part.out_w,
        part.in_hw[1],
        p.kernel[1],
        p.stride[1],
        p.pad[1],
    );
    let planes = part.lane_rows * part.batches as f64;
    let row_share = part.rows as f64 / part.out_h.max(1) as f64;
    let per_row = (part.out_w as f64 / part.eu.max(1.0)).ceil();
    let rows = edge_rows as f64 * row_share * per_row;
    let cols = edge_cols as f64 * part.rows as f64;
    planes * (rows + cols) * CYCLES_PER_EU_ROW
}

/// Outputs along one axis (of `out` outputs over `input` elements, kernel `k`, stride
/// `s`, leading padding `pad`) whose window starts in the leading padding or ends past
/// the input.
fn edge_outputs(out: u64, input: u64, k: u64, s: u64, pad: u64) -> u64 {
    let s = s.max(1);
    // windows i·s − pad < 0: the first ⌈pad / s⌉
    let leading = pad.div_ceil(s).min(out);
    // windows i·s − pad + k > input: from ⌊(input + pad − k) / s⌋ + 1 on
    let trailing_from = (input + pad)
        .checked_sub(k)
        .map_or(0, |room| room / s + 1)
        .clamp(leading, out);
    leading + out.saturating_sub(trailing_from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: the outputs whose window [i·s − pad, i·s − pad + k) leaves [0, input).
    fn naive(out: u64, input: u64, k: u64, s: u64, pad: u64) -> u64 {
        (0..out)
            .filter(|&i| {
                let start = (i * s) as i64 - pad as i64;
                start < 0 || start + k as i64 > input as i64
            })
            .count() as u64
    }

    #[test]
    fn edge_outputs_match_a_window_by_window_count() {
        for input in 1u64..20 {
            for k in 1..6 {
                for s in 1..4 {
                    for pad in 0..k {
                        // floor and ceil modes' output counts
                        let span = input + 2 * pad;
                        if span < k {
                            continue;
                        }
                        for out in [(span - k) / s + 1, (span - k).div_ceil(s) + 1] {
                            assert_eq!(
                                edge_outputs(out, input, k, s, pad),
                                naive(out, input, k, s, pad),
                                "in {input} k {k} s {s} pad {pad} out {out}"
                            );
                        }
                    }
                }
            }
        }
    }
}
