//! The search only groups ops linked through the tensors they share: a group of ops
//! that share nothing keeps nothing on chip. This also keeps a topology of 2,000
//! independent layers fast (issue 24: it took 82 s).

use std::collections::HashMap;
use tpusim_graph::Graph;
use tpusim_planner::{plan, prepare, NpuChip, PlanOptions, Preparation};

/// Whether the named ops form one component when linked by shared activations.
fn connected(g: &Graph, names: &[String]) -> bool {
    let ids: Vec<usize> = names
        .iter()
        .map(|n| g.ops.iter().position(|o| &o.name == n).unwrap())
        .collect();
    let mut comp: Vec<usize> = (0..ids.len()).collect();
    let find = |comp: &mut Vec<usize>, mut i: usize| {
        while comp[i] != i {
            i = comp[i];
        }
        i
    };
    let mut seen: HashMap<usize, usize> = HashMap::new();
    for (k, &o) in ids.iter().enumerate() {
        for &t in g.ops[o].inputs.iter().chain(&g.ops[o].outputs) {
            if let Some(&j) = seen.get(&t) {
                let (a, b) = (find(&mut comp, k), find(&mut comp, j));
                comp[a] = b;
            } else {
                seen.insert(t, k);
            }
        }
    }
    let root = find(&mut comp, 0);
    (0..ids.len()).all(|k| find(&mut comp, k) == root)
}

#[test]
fn every_group_of_the_built_in_models_is_connected() {
    for (model, chip) in [
        ("resnet50", "bm1684x"),
        ("mobilenetv2", "bm1688"),
        ("resnet18", "cv183x"),
    ] {
        let g = prepare(
            &tpusim_graph::load(model, 2, (224, 224)).unwrap(),
            Preparation {
                fuse: true,
                input_bits: Some(32),
                f32_ops: Default::default(),
            },
        )
        .unwrap();
        let p = plan(&g, &NpuChip::preset(chip).unwrap(), &PlanOptions::default()).unwrap();
        assert!(!p.groups.is_empty());
        for gp in &p.groups {
            assert!(connected(&g, &gp.ops), "{model} on {chip}: {:?}", gp.ops);
        }
    }
}

#[test]
fn independent_layers_are_never_grouped() {
    let mut csv = String::from("Layer,M,N,K,\n");
    for i in 0..2000 {
        csv.push_str(&format!(
            "fc{i},{},{},{},\n",
            64 << (i % 3),
            256 << (i % 2),
            128 << (i % 4)
        ));
    }
    let g = prepare(
        &tpusim_graph::from_topology_csv(&csv, "independent", 1).unwrap(),
        Preparation {
            fuse: false,
            input_bits: None,
            f32_ops: Default::default(),
        },
    )
    .unwrap();
    let p = plan(
        &g,
        &NpuChip::preset("bm1684x").unwrap(),
        &PlanOptions::default(),
    )
    .unwrap();
    assert_eq!(g.ops.len(), 2000);
    assert!(
        p.groups.iter().all(|gp| gp.ops.len() == 1),
        "a group of independent layers"
    );
}
