//! Copies of channels across lanes, as the NPU's compiler makes them where channels
//! must move to other lanes: a concat's inputs that do not start on a lane-row
//! boundary of the output, and a grouped conv's groups that do not start on lane 0.
//! Timed by TPU-MLIR 1.30.2's codegen profiles (`LANE_COPY`) of the zoo's Inception
//! nets and grouped convs (`tpumlir/tests/compute.rs`).

use tpusim_graph::{Graph, Op};

/// Where copies happen: the lanes, the batches copied, the positions of one channel's
/// plane, and EU_NUM, positions a cycle.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plane {
    /// Lanes (NPUs).
    pub npu_num: u64,
    /// Batches copied, each on its own.
    pub batches: u64,
    /// Positions of one channel's plane.
    pub positions: u64,
    /// Positions a cycle (EU_NUM).
    pub eu: f64,
}

impl Plane {
    /// Cycles to copy `channels` channels of one batch across lanes, to lanes starting
    /// at `to_lane`: a channel at a time, EU_NUM positions a cycle, once for each row
    /// of lanes the target channels touch. TPU-MLIR 1.30.2's profiles (`LANE_COPY`) of
    /// the zoo's Inception concats and grouped convs: bm1684x, 32 channels of 24×24 to
    /// lane 16, 576 cycles; 48 to lane 32 (two rows), 1,728; bm1688, 52 of 12×12 to
    /// lane 16 (three rows), 2,808.
    fn copy_cycles(&self, channels: u64, to_lane: u64) -> f64 {
        let npu = self.npu_num.max(1);
        let rows = (to_lane % npu + channels).div_ceil(npu);
        (channels * rows) as f64 * (self.positions as f64 / self.eu.max(1.0)).ceil()
    }
}

/// Cycles a grouped conv spends moving each group's input channels to lane 0, where
/// its MACs read them: every group whose first channel is not on lane 0, per batch
/// ([`Plane::copy_cycles`]). TPU-MLIR 1.30.2 runs a grouped conv group by group, and
/// its profiles count these copies: on bm1684x, 8 groups of 8 channels on 40×40 maps,
/// 7 copies a batch of 400 cycles; 16 groups of 8 on 20×20, 14 of 104 (groups 0 and 8
/// start on lane 0).
pub(crate) fn grouped_conv_copies(groups: u64, icg: u64, at: Plane) -> f64 {
    // group k starts on lane 0 when npu divides k·icg: every (npu / gcd(icg, npu))-th
    let npu = at.npu_num.max(1);
    let period = npu / gcd(icg.max(1), npu);
    let moved = (groups - groups.div_ceil(period)) as f64;
    at.batches as f64 * moved * at.copy_cycles(icg, 0)
}

/// Cycles of a concat along channels: each input whose first channel does not land on
/// lane 0 of the output is copied across lanes ([`Plane::copy_cycles`]); the others
/// are written in place. Plus one EU pass over an output plane per batch.
pub(crate) fn concat_cycles(graph: &Graph, op: &Op, at: Plane) -> f64 {
    let npu = at.npu_num.max(1);
    let mut offset = 0u64;
    let mut copies = 0.0;
    for x in op.inputs.iter().filter_map(|&i| graph.tensors.get(i)) {
        let c = x.shape.c;
        if offset % npu != 0 {
            copies += at.copy_cycles(c, offset);
        }
        offset = offset.saturating_add(c);
    }
    at.batches as f64 * (copies + (at.positions as f64 / at.eu.max(1.0)).ceil())
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

    fn plane(npu_num: u64, positions: u64, eu: f64) -> Plane {
        Plane {
            npu_num,
            batches: 1,
            positions,
            eu,
        }
    }

    #[test]
    fn groups_off_lane_zero_are_counted_as_one_by_one() {
        for npu in [16u64, 32, 64] {
            let at = plane(npu, 100, 8.0);
            for icg in 1..=70u64 {
                for groups in 1..=40u64 {
                    let one_by_one = (0..groups).filter(|k| k * icg % npu != 0).count() as f64;
                    let got = grouped_conv_copies(groups, icg, at);
                    assert_eq!(
                        got,
                        one_by_one * at.copy_cycles(icg, 0),
                        "npu {npu} icg {icg} groups {groups}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_copy_costs_once_per_row_of_target_lanes() {
        // 48 channels to lane 32 of 64 touch two rows; to lane 0, one
        let at = plane(64, 576, 32.0);
        assert_eq!(at.copy_cycles(48, 32), 48.0 * 2.0 * 18.0);
        assert_eq!(at.copy_cycles(48, 0), 48.0 * 18.0);
        // 52 to lane 48 of 32 lanes (lane 16 of a row) touch three
        assert_eq!(plane(32, 144, 8.0).copy_cycles(52, 48), 52.0 * 3.0 * 18.0);
    }
}
