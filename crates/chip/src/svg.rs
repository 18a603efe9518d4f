//! A log-log roofline plot of a chip as plain SVG text: one diagonal roof per memory
//! (HBM, VMEM, PCIe, plus any extra bandwidth), one flat roof per distinct dtype
//! peak, and optionally an operation placed at (intensity, achieved FLOP/s).

use crate::chip::Chip;
use crate::dtype::RateClass;
use std::fmt::Write;

/// An operation to mark on the plot.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotPoint {
    /// Text beside the mark.
    pub label: String,
    /// FLOPs per byte.
    pub intensity: f64,
    /// Achieved FLOP/s (FLOPs / lower-bound time).
    pub flops_per_s: f64,
}

const W: f64 = 720.0;
const H: f64 = 480.0;
const L: f64 = 80.0;
const R: f64 = 170.0;
const T: f64 = 30.0;
const B: f64 = 50.0;

/// Largest |decimal exponent| an axis reaches (f64 spans about 1e-324 to 1e308).
const MAX_DECADE: f64 = 330.0;

use tpusim_svg::esc;

/// The SVG document. `extra_bandwidths` adds named memory roofs (bytes/s), e.g. a
/// user's `--bw` override.
pub fn roofline_svg(
    chip: &Chip,
    point: Option<&PlotPoint>,
    extra_bandwidths: &[(String, f64)],
) -> String {
    let mut peaks: Vec<(String, f64)> = Vec::new();
    for c in RateClass::all() {
        let p = chip.peak(c);
        match peaks
            .iter_mut()
            .find(|(_, v)| (*v - p.ops_per_s).abs() <= 1e-9 * p.ops_per_s)
        {
            Some(e) => e.0.push_str(&format!("/{}", c.name())),
            None => peaks.push((c.name().to_string(), p.ops_per_s)),
        }
    }
    let mut bws: Vec<(String, f64)> = vec![("HBM".into(), chip.hbm_bytes_per_s)];
    if let Some(v) = chip.vmem_bytes_per_s() {
        bws.push(("VMEM".into(), v));
    }
    bws.push(("PCIe".into(), chip.pcie_bytes_per_s));
    bws.extend(extra_bandwidths.iter().cloned());
    let top = peaks.iter().map(|p| p.1).fold(0.0, f64::max);
    let min_bw = bws.iter().map(|b| b.1).fold(f64::INFINITY, f64::min);
    let max_bw = bws.iter().map(|b| b.1).fold(0.0, f64::max);
    // x: from where the fastest memory roof is 1e-3 of the top to past the slowest ridge
    let mut x0 = (top / max_bw * 1e-3).log10().floor();
    let mut x1 = (top / min_bw * 10.0).log10().ceil();
    let mut y0 = (top * 1e-4).log10().floor();
    let y1 = (top * 2.0).log10().ceil();
    if let Some(p) = point {
        if p.intensity.is_finite() && p.intensity > 0.0 {
            x0 = x0.min(p.intensity.log10().floor());
            x1 = x1.max(p.intensity.log10().ceil());
        }
        if p.flops_per_s > 0.0 {
            y0 = y0.min(p.flops_per_s.log10().floor());
        }
    }
    // Extreme user rates (--bw 5e-324) make a ratio infinite, and `inf as i32` would
    // draw 2^31 decades: keep every bound within f64's own range of decades.
    let clamp = |e: f64| e.clamp(-MAX_DECADE, MAX_DECADE);
    let (x0, x1, y0, y1) = (clamp(x0), clamp(x1), clamp(y0), clamp(y1));
    let px = |x: f64| L + (x.log10() - x0) / (x1 - x0) * (W - L - R);
    let py = |y: f64| H - B - (y.log10() - y0) / (y1 - y0) * (H - T - B);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, "<title>Roofline of {}</title>", esc(&chip.display_name));
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    // grid and tick labels, one per decade
    for e in x0 as i32..=x1 as i32 {
        let x = px(10f64.powi(e));
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{T}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/>"##,
            H - B
        );
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">1e{e}</text>"#,
            H - B + 15.0
        );
    }
    for e in y0 as i32..=y1 as i32 {
        let y = py(10f64.powi(e));
        let _ = writeln!(
            s,
            r##"<line x1="{L}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
            W - R
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">1e{e}</text>"#,
            L - 5.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">arithmetic intensity (FLOPs/byte)</text>"#,
        (L + W - R) / 2.0,
        H - 12.0
    );
    let _ = writeln!(
        s,
        r#"<text x="14" y="{:.1}" text-anchor="middle" transform="rotate(-90 14 {:.1})">FLOP/s</text>"#,
        (T + H - B) / 2.0,
        (T + H - B) / 2.0
    );
    let xmin = 10f64.powf(x0);
    let xmax = 10f64.powf(x1);
    for (name, peak) in &peaks {
        let y = py(*peak);
        let _ = writeln!(
            s,
            r##"<line class="compute-roof" x1="{L}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#c33" stroke-dasharray="4 3"/>"##,
            W - R
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{} {:.3e}</text>"#,
            W - R + 5.0,
            y + 4.0,
            esc(name),
            peak
        );
    }
    let colors = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
    for (i, (name, bw)) in bws.iter().enumerate() {
        // y = I·bw, clipped at the top compute roof
        let ridge = (top / bw).clamp(xmin, xmax);
        let start = xmin.max(10f64.powf(y0) / bw);
        if start >= ridge {
            continue;
        }
        let c = colors[i % colors.len()];
        let _ = writeln!(
            s,
            r#"<polyline class="memory-roof" fill="none" stroke="{c}" stroke-width="2" points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}"/>"#,
            px(start),
            py(start * bw),
            px(ridge),
            py(ridge * bw),
            W - R,
            py(ridge * bw)
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" fill="{c}" text-anchor="end">{} {:.3e} B/s</text>"#,
            px(ridge) - 4.0,
            py(ridge * bw) + 14.0 + 12.0 * i as f64,
            esc(name),
            bw
        );
    }
    if let Some(p) = point {
        if p.intensity.is_finite() && p.intensity > 0.0 && p.flops_per_s > 0.0 {
            let (x, y) = (px(p.intensity), py(p.flops_per_s));
            let _ = writeln!(
                s,
                r##"<circle class="op" cx="{x:.1}" cy="{y:.1}" r="5" fill="#000"/>"##
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                x + 8.0,
                y - 6.0,
                esc(&p.label)
            );
        }
    }
    let _ = writeln!(s, "</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::lookup;

    #[test]
    fn has_every_roof_and_the_point() {
        let chip = lookup("v5e").unwrap();
        let p = PlotPoint {
            label: "matmul".into(),
            intensity: 100.0,
            flops_per_s: 8.1e13,
        };
        let svg = roofline_svg(&chip, Some(&p), &[]);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("class=\"memory-roof\"").count(), 3);
        // bf16, int8/int4 (same rate), f32, fp8 = bf16 → three distinct compute roofs
        assert_eq!(svg.matches("class=\"compute-roof\"").count(), 3);
        assert_eq!(svg.matches("class=\"op\"").count(), 1);
    }

    #[test]
    fn extreme_rates_keep_the_axes_bounded() {
        // Fuzz finding: `roofline op --bw 5e-324 --svg` made the x range infinite and
        // aborted allocating gigabytes of grid lines.
        let chip = lookup("v5e").unwrap();
        let p = PlotPoint {
            label: "op".into(),
            intensity: 1.0,
            flops_per_s: 5e-324,
        };
        for bw in [5e-324, 1e-300, 1e308] {
            let svg = roofline_svg(&chip, Some(&p), &[("user".into(), bw)]);
            assert!(svg.trim_end().ends_with("</svg>"));
            assert!(svg.len() < 1 << 20, "{bw}: {} bytes", svg.len());
        }
    }
}
