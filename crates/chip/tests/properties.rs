//! Invariants of the topology and collective models, checked on random slices:
//! hop distance is a metric, wraparound never lengthens a path, and no collective
//! beats the book's bandwidth floor V / (W · axes).

use proptest::prelude::*;
use tpusim_chip::collective::{collective, Collective};
use tpusim_chip::{lookup, Slice};

/// A random slice of the v5p pod (3-D, up to 16x20x28) with random wraparound flags,
/// plus three random chips in it.
fn slice_and_points() -> impl Strategy<Value = (Vec<u32>, Vec<bool>, [Vec<u32>; 3])> {
    (1u32..=16, 1u32..=20, 1u32..=28, any::<[bool; 3]>()).prop_flat_map(|(a, b, c, w)| {
        let pt = (0..a, 0..b, 0..c).prop_map(|(i, j, k)| vec![i, j, k]);
        (
            Just(vec![a, b, c]),
            Just(w.to_vec()),
            [pt.clone(), pt.clone(), pt],
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn hop_distance_is_a_metric((dims, wrap, [p, q, r]) in slice_and_points()) {
        let chip = lookup("v5p").unwrap();
        let s = Slice::new(&chip, &dims).unwrap().with_wraparound(&wrap).unwrap();
        let d = |a: &[u32], b: &[u32]| s.distance(a, b).unwrap();
        prop_assert_eq!(d(&p, &p), 0);
        prop_assert_eq!(d(&p, &q) == 0, p == q);
        prop_assert_eq!(d(&p, &q), d(&q, &p));
        prop_assert!(d(&p, &r) <= d(&p, &q) + d(&q, &r));
        prop_assert!(d(&p, &q) <= s.max_hops());
        prop_assert!(s.eccentricity(&p).unwrap() <= s.max_hops());
        prop_assert!(d(&p, &q) <= s.eccentricity(&p).unwrap());
    }

    #[test]
    fn wraparound_never_increases_a_distance((dims, wrap, [p, q, _r]) in slice_and_points()) {
        let chip = lookup("v5p").unwrap();
        let mesh = Slice::new(&chip, &dims).unwrap().with_wraparound(&[false; 3]).unwrap();
        let some = mesh.clone().with_wraparound(&wrap).unwrap();
        let torus = mesh.clone().with_wraparound(&[true; 3]).unwrap();
        let (a, b, c) = (mesh.distance(&p, &q).unwrap(), some.distance(&p, &q).unwrap(), torus.distance(&p, &q).unwrap());
        prop_assert!(c <= b && b <= a);
        prop_assert!(torus.max_hops() <= some.max_hops() && some.max_hops() <= mesh.max_hops());
    }

    #[test]
    fn no_collective_beats_the_bandwidth_floor(
        (dims, wrap, _) in slice_and_points(),
        bytes in 1.0f64..1e12,
        lat in 0.0f64..1e-5,
        mask in 1u8..8,
    ) {
        let chip = lookup("v5p").unwrap();
        let s = Slice::new(&chip, &dims).unwrap().with_wraparound(&wrap).unwrap();
        let axes: Vec<usize> = (0..3).filter(|i| mask & (1 << i) != 0 && dims[*i] >= 2).collect();
        prop_assume!(!axes.is_empty());
        let w = chip.ici_bidi_bytes_per_s;
        let floor = bytes / (w * axes.len() as f64);
        for kind in [Collective::AllGather, Collective::ReduceScatter, Collective::AllReduce] {
            let e = collective(&s, kind, &axes, bytes, lat, w).unwrap();
            prop_assert!(e.time_s >= floor * (1.0 - 1e-12), "{kind:?} {} < {floor}", e.time_s);
            prop_assert!(e.time_s >= e.latency_s && e.time_s >= e.bandwidth_s);
        }
        // AllToAll moves a quarter of the bytes on a ring: its floor is V / (4 W axes)
        let a2a = collective(&s, Collective::AllToAll, &axes, bytes, lat, w).unwrap();
        prop_assert!(a2a.time_s >= floor / 4.0 * (1.0 - 1e-12));
        // AllReduce is exactly ReduceScatter + AllGather
        let rs = collective(&s, Collective::ReduceScatter, &axes, bytes, lat, w).unwrap();
        let ar = collective(&s, Collective::AllReduce, &axes, bytes, lat, w).unwrap();
        prop_assert!((ar.time_s - 2.0 * rs.time_s).abs() <= 1e-9 * ar.time_s);
    }

    #[test]
    fn p2p_never_beats_one_link_per_port((dims, wrap, [p, q, _r]) in slice_and_points(), bytes in 1.0f64..1e10) {
        let chip = lookup("v5p").unwrap();
        let s = Slice::new(&chip, &dims).unwrap().with_wraparound(&wrap).unwrap();
        let t = tpusim_chip::transfer::p2p(&s, &p, &q, bytes, 1e-6, 9e10).unwrap();
        prop_assert!(t.ports <= chip.ici_links_per_chip);
        if p != q {
            prop_assert!(t.ports >= 1);
            prop_assert!(t.total_s >= bytes / (f64::from(chip.ici_links_per_chip) * 9e10));
            prop_assert!(t.total_s >= t.hops as f64 * 1e-6);
        }
    }
}

/// A naive breadth-first search over the torus/mesh graph agrees with the closed-form
/// distance on every pair of a few small slices.
#[test]
fn distance_matches_breadth_first_search() {
    let chip = lookup("v5p").unwrap();
    for (dims, wrap) in [
        (vec![4u32, 4, 4], vec![true, true, true]),
        (vec![3, 5, 2], vec![false, true, false]),
        (vec![2, 2, 4], vec![false, false, false]),
        (vec![1, 7, 3], vec![false, true, true]),
    ] {
        let s = Slice::new(&chip, &dims)
            .unwrap()
            .with_wraparound(&wrap)
            .unwrap();
        let n: [u32; 3] = [dims[0], dims[1], dims[2]];
        let idx = |c: &[u32]| ((c[0] * n[1] + c[1]) * n[2] + c[2]) as usize;
        let total = (n[0] * n[1] * n[2]) as usize;
        let coords: Vec<Vec<u32>> = (0..n[0])
            .flat_map(|i| (0..n[1]).flat_map(move |j| (0..n[2]).map(move |k| vec![i, j, k])))
            .collect();
        for src in &coords {
            let mut dist = vec![u64::MAX; total];
            dist[idx(src)] = 0;
            let mut queue = std::collections::VecDeque::from([src.clone()]);
            while let Some(c) = queue.pop_front() {
                for ax in 0..3 {
                    let len = n[ax];
                    let mut nbrs = Vec::new();
                    if c[ax] + 1 < len {
                        nbrs.push(c[ax] + 1);
                    } else if s.wraparound[ax] && len > 2 {
                        nbrs.push(0);
                    }
                    if c[ax] > 0 {
                        nbrs.push(c[ax] - 1);
                    } else if s.wraparound[ax] && len > 2 {
                        nbrs.push(len - 1);
                    }
                    for v in nbrs {
                        let mut m = c.clone();
                        m[ax] = v;
                        if dist[idx(&m)] == u64::MAX {
                            dist[idx(&m)] = dist[idx(&c)] + 1;
                            queue.push_back(m);
                        }
                    }
                }
            }
            for dst in &coords {
                assert_eq!(
                    s.distance(src, dst).unwrap(),
                    dist[idx(dst)],
                    "{dims:?} {wrap:?} {src:?}->{dst:?}"
                );
            }
        }
    }
}
