//! The local-memory picture draws addresses growing upwards from 0 at each panel's
//! bottom edge (as the report's memory plans do), with an address axis.

use tpusim_planner::{plan, prepare, NpuChip, PlanOptions, Preparation};

fn attr(tag: &str, name: &str) -> f64 {
    let key = format!(" {name}=\"");
    let i = tag.find(&key).unwrap() + key.len();
    tag[i..i + tag[i..].find('"').unwrap()].parse().unwrap()
}

#[test]
fn addresses_grow_upwards_from_the_panel_bottom() {
    let g = prepare(
        &tpusim_graph::load("resnet18", 1, (64, 64)).unwrap(),
        Preparation {
            fuse: true,
            input_bits: Some(32),
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
    let svg = tpusim_planner::svg::render(&p);
    let lane = p.lane_bytes as f64;
    let (mut panel, mut checked) = (None::<(f64, f64)>, 0);
    for piece in svg.split("<rect").skip(1) {
        let tag = &piece[..piece.find('>').unwrap()];
        if tag.contains("fill=\"#fafafa\"") {
            panel = Some((attr(tag, "y"), attr(tag, "height")));
            continue;
        }
        let (y0, ph) = panel.expect("blocks come after their panel");
        let title = &piece[piece.find("<title>").unwrap() + 7..piece.find("</title>").unwrap()];
        let addr: f64 = title
            .split(" addr ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let size: f64 = title
            .split(" size ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // the top edge at the block's end address; the bottom at its start (a block
        // under a pixel tall is drawn one pixel tall)
        let top = y0 + ph - (addr + size) / lane * ph;
        assert!((attr(tag, "y") - top).abs() < 0.02, "{title}");
        if size / lane * ph >= 1.0 {
            let bottom = attr(tag, "y") + attr(tag, "height");
            assert!(
                (bottom - (y0 + ph - addr / lane * ph)).abs() < 0.02,
                "{title}"
            );
        }
        checked += 1;
    }
    assert!(checked > 10, "{checked} blocks");
    // the axis: 0 at the bottom, the lane size at the top of each panel
    assert!(svg.contains(&format!(">{}</text>", p.lane_bytes)));
    assert!(svg.contains("text-anchor=\"end\">0</text>"));
}
