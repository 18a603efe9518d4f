//! Copies of channels across lanes, as the NPU's compiler makes them where channels
//! must move to other lanes: a concat's inputs that do not start on a lane-row
//! boundary of the output, and a grouped conv's groups that do not start on lane 0.
//! Timed by TPU-MLIR 1.30.2's codegen profiles (`LANE_COPY`) of the zoo's Inception
//! nets and grouped convs (`tpumlir/tests/compute.rs`).

use tpusim_graph::{Graph, Op};

/// Cycles to copy `channels` channels of `plane` positions per batch across lanes, to
/// lanes starting at `to_lane`: a channel at a time, EU_NUM (`eu`) positions a cycle,
/// once for each row of lanes the target channels touch. TPU-MLIR 1.30.2's profiles
/// (`LANE_COPY`) of the zoo's Inception concats and grouped convs: bm1684x, 32 channels
/// of 24×24 to lane 16, 576 cycles; 48 to lane 32 (two rows), 1,728; bm1688, 52 of
/// 12×12 to lane 16 (three rows), 2,808.
fn lane_copy_cycles(channels: u64, to_lane: u64, npu_num: u64, plane: u64, eu: f64) -> f64 {
    let npu = npu_num.max(1);
    let rows = (to_lane % npu + channels).div_ceil(npu);
    (channels * rows) as f64 * (plane as f64 / eu.max(1.0)).ceil()
}

/// Cycles a grouped conv spends moving each group's input channels to lane 0, where
/// its MACs read them: every group whose first channel is not on lane 0, per batch
/// ([`lane_copy_cycles`]). TPU-MLIR 1.30.2 runs a grouped conv group by group, and its
/// profiles count these copies: on bm1684x, 8 groups of 8 channels on 40×40 maps, 7
/// copies a batch of 400 cycles; 16 groups of 8 on 20×20, 14 of 104 (groups 0 and 8
/// start on lane 0).
pub(crate) fn grouped_conv_copies(
    groups: u64,
    icg: u64,
    npu_num: u64,
    n_len: u64,
    plane: u64,
    eu: f64,
) -> f64 {
    // group k starts on lane 0 when npu divides k·icg: every (npu / gcd(icg, npu))-th
    let npu = npu_num.max(1);
    let period = npu / gcd(icg.max(1), npu);
    let moved = (groups - groups.div_ceil(period)) as f64;
    n_len as f64 * moved * lane_copy_cycles(icg, 0, npu, plane, eu)
}

/// Cycles of a concat along channels: each input whose first channel does not land on
/// lane 0 of the output is copied across lanes ([`lane_copy_cycles`]); the others are
/// written in place. Plus one EU pass over an output plane per batch.
pub(crate) fn concat_cycles(
    graph: &Graph,
    op: &Op,
    npu_num: u64,
    n_len: u64,
    plane: u64,
    eu: f64,
) -> f64 {
    let npu = npu_num.max(1);
    let mut offset = 0u64;
    let mut copies = 0.0;
    for x in op.inputs.iter().filter_map(|&i| graph.tensors.get(i)) {
        let c = x.shape.c;
        if offset % npu != 0 {
            copies += lane_copy_cycles(c, offset, npu, plane, eu);
        }
        offset = offset.saturating_add(c);
    }
    n_len as f64 * (copies + (plane as f64 / eu.max(1.0)).ceil())
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_off_lane_zero_are_counted_as_one_by_one() {
        for npu in [16u64, 32, 64] {
            for icg in 1..=70u64 {
                for groups in 1..=40u64 {
                    let one_by_one = (0..groups).filter(|k| k * icg % npu != 0).count() as f64;
                    let each = lane_copy_cycles(icg, 0, npu, 100, 8.0);
                    let got = grouped_conv_copies(groups, icg, npu, 1, 100, 8.0);
                    assert_eq!(
                        got,
                        one_by_one * each,
                        "npu {npu} icg {icg} groups {groups}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_copy_costs_once_per_row_of_target_lanes() {
        // 48 channels to lane 32 of 64 touch two rows; to lane 0, one
        assert_eq!(lane_copy_cycles(48, 32, 64, 576, 32.0), 48.0 * 2.0 * 18.0);
        assert_eq!(lane_copy_cycles(48, 0, 64, 576, 32.0), 48.0 * 18.0);
        // 52 to lane 48 of 32 lanes (lane 16 of a row) touch three
        assert_eq!(lane_copy_cycles(52, 48, 32, 144, 8.0), 52.0 * 3.0 * 18.0);
    }
}
