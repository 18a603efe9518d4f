//! Op order between independent branches: the order in which a group's ops run decides
//! which weight loads can overlap which computation, and which ops can be grouped.
//!
//! [`tpu_mlir_order`] is the order TPU-MLIR's `--topo-sort` pass gives the ops before
//! its layer-group pass (read from its final MLIR and its cache JSONs for ResNet-18 and
//! ResNet-50): ops that can run in local memory and ops that cannot are taken in turns
//! ("ping-pong"), and within a turn the op made ready *last* goes first (ops made ready
//! together: the latest in the original order first). In a ResNet-50 bottleneck that runs the shortcut conv before the 1×1 reduce
//! conv even when the shortcut is the heavier; a plan exported to TPU-MLIR must group
//! ops in runs that are consecutive in this order, or TPU-MLIR rejects it ("operand
//! does not dominate this use").

use crate::ir::{Graph, OpId};

/// Producer op of every tensor, and the users (consumer ops) of every op.
fn edges(g: &Graph) -> (Vec<usize>, Vec<Vec<OpId>>) {
    let n = g.ops.len();
    let mut producer = vec![None; g.tensors.len()];
    for (i, op) in g.ops.iter().enumerate() {
        for &t in &op.outputs {
            if let Some(p) = producer.get_mut(t) {
                *p = Some(i);
            }
        }
    }
    let mut waiting = vec![0usize; n];
    let mut users: Vec<Vec<OpId>> = vec![Vec::new(); n];
    for (i, op) in g.ops.iter().enumerate() {
        for &t in &op.inputs {
            if let Some(Some(p)) = producer.get(t) {
                waiting[i] += 1;
                users[*p].push(i);
            }
        }
    }
    (waiting, users)
}

/// TPU-MLIR's topological order of `waiting.len()` nodes, node `i` waiting on
/// `waiting[i]` others and `users[i]` the nodes waiting on it: ready nodes that can run in
/// local memory (`local(i)`) and ready ones that cannot are taken in turns, local first,
/// and within a turn the node made ready last first (a stack: nodes made ready together
/// go latest in the original order first). So of two rotary embeddings whose transposes
/// run K's then Q's, Q's runs first (TPU-MLIR's llama_d320_s256; llama_d128_s64, whose
/// transposes run Q's then K's, runs K's first), and a ResNet-50 bottleneck runs its
/// shortcut conv first. `None` when the nodes have a cycle.
pub fn ping_pong(
    mut waiting: Vec<usize>,
    users: &[Vec<usize>],
    local: impl Fn(usize) -> bool,
) -> Option<Vec<usize>> {
    let n = waiting.len();
    // ready nodes of each kind (local / not), the last made ready first
    let mut ready: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for i in (0..n).filter(|&i| waiting[i] == 0) {
        ready[local(i) as usize].push(i);
    }
    let mut turn = 1usize; // TPU-MLIR starts with the local ops
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let Some(i) = ready[turn].pop() else {
            if ready[1 - turn].is_empty() {
                break;
            }
            turn = 1 - turn;
            continue;
        };
        order.push(i);
        for &u in users.get(i).map_or(&[][..], Vec::as_slice) {
            waiting[u] -= 1;
            if waiting[u] == 0 {
                ready[local(u) as usize].push(u);
            }
        }
    }
    (order.len() == n).then_some(order)
}

/// `g` with its ops in TPU-MLIR's topological order (see the module docs); `local(op)`
/// says whether an op can run in a layer group. Tensor ids are unchanged; the result
/// is a valid topological order of the same ops.
pub fn tpu_mlir_order(g: &Graph, local: impl Fn(&crate::ir::Op) -> bool) -> Graph {
    let (waiting, users) = edges(g);
    let Some(order) = ping_pong(waiting, &users, |i| local(&g.ops[i])) else {
        return g.clone();
    };
    Graph {
        ops: order.iter().map(|&i| g.ops[i].clone()).collect(),
        ..g.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_a_turn_the_node_made_ready_last_goes_first() {
        // 0: local; 1, 2: global, after 0; 3 after 1 and 4 after 2, both local. The
        // global turn runs 2 then 1, so 3 is made ready last and runs before 4
        let users = vec![vec![1, 2], vec![3], vec![4], vec![], vec![]];
        let waiting = vec![0, 1, 1, 1, 1];
        let order = ping_pong(waiting, &users, |i| ![1, 2].contains(&i));
        assert_eq!(order, Some(vec![0, 2, 1, 3, 4]));
    }
    use crate::builder::GraphBuilder;
    use crate::ir::{OpKind, Shape4};

    #[test]
    fn tpu_mlir_order_takes_the_latest_ready_op_and_alternates_local_and_global() {
        // a bottleneck whose shortcut (added last, as ONNX exports list it) is heavier
        let mut b = GraphBuilder::new("bottleneck");
        let x = b.input("x", Shape4::new(1, 256, 14, 14));
        let r = b.conv("reduce", x, 64, 1, 1, 0, 1, true).unwrap();
        let m = b.conv("mid", r, 64, 3, 1, 1, 1, true).unwrap();
        let e = b.conv("expand", m, 512, 1, 2, 0, 1, false).unwrap();
        let s = b.conv("shortcut", x, 512, 1, 2, 0, 1, false).unwrap();
        let y = b.add_op("add", OpKind::Add, &[e, s], &[]).unwrap();
        let f = b.add_op("flat", OpKind::Flatten, &[y], &[]).unwrap();
        b.output(f);
        let g = b.finish().unwrap();
        let names = |g: &Graph| g.ops.iter().map(|o| o.name.clone()).collect::<Vec<_>>();
        let local = |o: &crate::ir::Op| !matches!(o.kind, OpKind::Flatten);
        let t = tpu_mlir_order(&g, local);
        assert_eq!(
            names(&t),
            ["shortcut", "reduce", "mid", "expand", "add", "flat"]
        );
        crate::validate::validate(&t).unwrap();
        // a global op whose input is ready waits until no local op is ready
        let mut b = GraphBuilder::new("fork");
        let x = b.input("x", Shape4::new(1, 8, 8, 8));
        let f = b.add_op("flat", OpKind::Flatten, &[x], &[]).unwrap();
        let c = b.conv("c", x, 8, 3, 1, 1, 1, true).unwrap();
        b.output(f);
        b.output(c);
        let g = b.finish().unwrap();
        assert_eq!(names(&tpu_mlir_order(&g, local)), ["c", "flat"]);
    }
}
