//! Renderers on a hand-built report: the terminal summary and table carry every figure,
//! the HTML page is self-contained and well-formed, the pictures are valid SVG text.

use tpusim_report::capacity::CapacityReport;
use tpusim_report::model::*;
use tpusim_report::{html, terminal};

#[allow(clippy::too_many_arguments)]
fn layer(
    name: &str,
    op: &str,
    flops: u64,
    logical: u64,
    moved: u64,
    c: f64,
    m: f64,
    group: usize,
) -> LayerReport {
    LayerReport {
        name: name.into(),
        op: op.into(),
        flops,
        bytes_logical: logical,
        bytes_moved: moved,
        compute_s: c,
        memory_s: m,
        bound: if c >= m {
            "compute".into()
        } else {
            "memory".into()
        },
        group,
        utilization: 0.5,
    }
}

fn sample() -> Report {
    let layers = vec![
        layer(
            "conv1",
            "conv",
            236_027_904,
            1_000_000,
            3_000_000,
            2e-5,
            4e-6,
            0,
        ),
        layer(
            "relu<1>", "relu", 800_000, 1_600_000, 1_600_000, 1e-7, 2e-6, 0,
        ),
        layer(
            "fc", "matmul", 4_096_000, 4_100_000, 4_200_000, 1e-6, 5e-6, 1,
        ),
    ];
    let groups = vec![
        GroupReport {
            ops: vec!["conv1".into(), "relu<1>".into()],
            time_s: 2.5e-5,
            global: false,
            nsecs: 1,
            hsecs: 4,
            dma_s: 8e-6,
            compute_s: 2.1e-5,
            exposed_dma_s: 4e-6,
            blocks: vec![
                BlockReport {
                    name: "x".into(),
                    kind: "activation".into(),
                    addr: 0,
                    size: 4096,
                    start_ts: 0,
                    end_ts: 1,
                },
                BlockReport {
                    name: "w".into(),
                    kind: "weight".into(),
                    addr: 4096,
                    size: 8192,
                    start_ts: 0,
                    end_ts: 2,
                },
            ],
        },
        GroupReport {
            ops: vec!["fc".into()],
            time_s: 5e-6,
            global: true,
            nsecs: 1,
            hsecs: 1,
            dma_s: 5e-6,
            compute_s: 1e-6,
            exposed_dma_s: 4e-6,
            blocks: vec![],
        },
    ];
    let total: f64 = groups.iter().map(|g| g.time_s).sum();
    Report {
        model: "tiny & <net>".into(),
        chip: "v5e".into(),
        total_time_s: total,
        compute_s: 2.2e-5,
        dma_s: 1.3e-5,
        exposed_dma_s: 8e-6,
        roofline_lower_bound_s: 1.2e-5,
        roofline_compute_s: 1.2e-6,
        roofline_memory_s: 1.2e-5,
        flops: layers.iter().map(|l| l.flops).sum(),
        bytes_logical: layers.iter().map(|l| l.bytes_logical).sum(),
        bytes_moved: layers.iter().map(|l| l.bytes_moved).sum(),
        layers,
        groups,
        batch: 1,
        dtype: "bf16".into(),
        chip_kind: "tpu".into(),
        peak_flops_per_s: 1.97e14,
        vector_flops_per_s: 1.0e13,
        offchip_bytes_per_s: 8.1e11,
        onchip_bytes: 128 << 20,
        lane_bytes: 128 << 20,
        achieved_flops_per_s: 2.4e8 / total,
        fits_hbm: Some(true),
        hbm_bytes_needed: 9_000_000,
        capacity: CapacityReport {
            hbm_bytes: Some(16 << 30),
            weight_bytes: 4_194_304,
            peak_activation_bytes: 4_805_696,
            peak_at_layer: 0,
            largest_batch_that_fits: None,
            chips_that_fit: vec![],
        },
        tensors: vec![
            TensorReport {
                name: "input".into(),
                shape: "1x3x224x224".into(),
                layout: "bf16[1,3,224,224]{3,2,1,0:T(4,128)(2,1)}".into(),
                bytes_logical: 301_056,
                bytes_stored: 458_752,
            },
            TensorReport {
                name: "fc.w".into(),
                shape: "2048x1000x1x1".into(),
                layout: "bf16[2048,1000]{1,0:T(8,128)(2,1)}".into(),
                bytes_logical: 4_096_000,
                bytes_stored: 4_194_304,
            },
        ],
        worst_layout: Some(LayoutPicture {
            tensor: "input".into(),
            caption: "tiles of (4,128)".into(),
            row_label: "tile rows".into(),
            col_label: "tile columns".into(),
            rows: 2,
            cols: 2,
            fill: vec![1.0, 0.75, 0.5, 0.0],
        }),
    }
}

#[test]
fn terminal_summary_has_every_headline() {
    let r = sample();
    let t = terminal::render(&r);
    for needle in [
        "total time",
        "30.0 µs",
        "12.0 µs",
        "2.50x the bound",
        "197 TFLOP/s",
        "Top 10 layers by time",
        "Top 10 tensors by padding waste",
        "conv1",
        "fc.w",
        "Layers (each alone",
    ] {
        assert!(t.contains(needle), "missing {needle:?} in\n{t}");
    }
    // top tensors: input wastes 157,696 B, fc.w 98,304 B: input first
    let top = r.top_tensors_by_waste(10);
    assert_eq!(top[0].name, "input");
    assert_eq!(top[0].waste_bytes(), 458_752 - 301_056);
    // top layers: conv1 (20 µs) first, fc (5 µs) second
    let names: Vec<&str> = r
        .top_layers_by_time(2)
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert_eq!(names, ["conv1", "fc"]);
    // every layer has one table row, then the column legend
    let table = terminal::layer_table(&r);
    let rows = table.lines().take_while(|l| *l != "  Columns:").count();
    assert_eq!(rows, 2 + r.layers.len());
}

#[test]
fn terminal_states_the_overlap_and_defines_every_column() {
    let r = sample();
    let t = terminal::render(&r);
    // 30 µs = compute 22 µs + exposed 8 µs; 13 µs of DMA, 5 µs hidden
    assert!(
        t.contains("composed of       compute 22.0 µs + exposed transfers 8.00 µs; transfers take 13.0 µs in all, 5.00 µs of them hidden under compute"),
        "{t}"
    );
    assert!(t.contains("How the time adds up:"), "{t}");
    // each table's header is followed by a legend naming each of its value columns
    let headers = [
        (
            "Top 10 layers",
            ["time", "bound", "util", "group"].as_slice(),
        ),
        (
            "Top 10 tensors",
            ["stored as", "logical", "stored", "waste", "expansion"].as_slice(),
        ),
        (
            "Layers (each alone",
            [
                "flops", "logical", "moved", "compute", "memory", "bound", "util", "group",
            ]
            .as_slice(),
        ),
    ];
    for (title, cols) in headers {
        let from = t.find(title).unwrap_or_else(|| panic!("no {title:?}"));
        let legend = &t[from..][t[from..].find("  Columns:").unwrap()..];
        let legend: Vec<&str> = legend
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("    "))
            .collect();
        for c in cols {
            assert!(
                legend.iter().any(|l| l.starts_with(&format!("    {c}: "))),
                "{title}: column {c:?} is not defined in {legend:?}"
            );
        }
    }
}

#[test]
fn html_draws_the_time_breakdown_and_defines_columns() {
    let r = sample();
    let page = html::render(&r);
    let from = page.find(r#"<section id="time-breakdown">"#).unwrap();
    let section = &page[from..from + page[from..].find("</section>").unwrap()];
    // one bar per group, its tooltip composing the time
    assert_eq!(section.matches("<g><title>").count(), r.groups.len());
    assert!(
        section.contains(
            "conv1, relu&lt;1&gt;: 25.0 µs = compute 21.0 µs + exposed 4.00 µs; transfers 8.00 µs"
        ),
        "{section}"
    );
    assert!(page.contains(r#"id="overlap-rule""#));
    for term in ["util", "exposed", "moved", "expansion"] {
        assert!(
            page.contains(&format!("<dt>{term}</dt>")),
            "{term} undefined"
        );
    }
}

#[test]
fn html_is_self_contained_and_escaped() {
    let r = sample();
    let page = html::render(&r);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    assert!(page.contains("tiny &amp; &lt;net&gt;"));
    assert!(!page.contains("tiny & <net>"));
    assert!(page.contains("relu&lt;1&gt;"));
    for id in [
        "summary",
        "roofline",
        "top-layers",
        "padding",
        "plans",
        "groups",
        "layers",
    ] {
        assert!(
            page.contains(&format!("<section id=\"{id}\">")),
            "section {id}"
        );
    }
    // no external resources and no scripts
    for bad in ["<script", "src=", "href=", "@import", "url("] {
        assert!(!page.contains(bad), "page contains {bad}");
    }
    // three layers placed on the roofline, two blocks in the plan, four layout cells
    assert_eq!(page.matches("fill-opacity=\"0.75\"><title>").count(), 3);
    // and the legend's two dots (compute- and memory-bound)
    assert_eq!(page.matches("<circle").count(), 5);
    assert_eq!(page.matches("steps 0–").count(), 2);
    assert_eq!(page.matches("% data</title>").count(), 4);
    // balanced svg/table/section tags
    for tag in ["svg", "table", "section", "tr", "td"] {
        assert_eq!(
            page.matches(&format!("<{tag}")).count(),
            page.matches(&format!("</{tag}>")).count(),
            "tag {tag}"
        );
    }
}

#[test]
fn json_has_the_contract_fields() {
    let r = sample();
    let v: serde_json::Value = serde_json::to_value(&r).unwrap();
    for k in [
        "model",
        "chip",
        "total_time_s",
        "roofline_lower_bound_s",
        "flops",
        "bytes_logical",
        "bytes_moved",
        "layers",
        "groups",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    for k in [
        "name",
        "op",
        "flops",
        "bytes_logical",
        "bytes_moved",
        "compute_s",
        "memory_s",
        "bound",
        "group",
    ] {
        assert!(v["layers"][0].get(k).is_some(), "layer missing {k}");
    }
    for k in ["ops", "time_s"] {
        assert!(v["groups"][0].get(k).is_some(), "group missing {k}");
    }
    let back: Report = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
}

#[test]
fn html_sample_is_written_for_the_browser_check() {
    // The page of the hand-built report, for `.ci/browser-check.sh FILE` during
    // development (the CI check renders the real default report instead).
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-sample.html");
    std::fs::write(&path, html::render(&sample())).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 1000);
}
