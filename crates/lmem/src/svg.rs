//! Lane maps as SVG: lanes as columns, rows of channel regions down each lane, each
//! batch (group of batches in the 4N layout) starting on a fresh row at the start NPU.
//! Cells show the channel held, the part of the region that is data versus EU padding,
//! and the slots left unused before the start NPU and after the last channel.

use crate::chip::Chip;
use crate::error::{LmemError, Result};
use crate::placement::Placement;
use crate::strides::rows_per_batch;
use std::fmt::Write;

/// Rows drawn at most; the rest are summarised in a note.
pub const MAX_ROWS: u64 = 256;

/// Lanes (columns) drawn at most: every lane is a column, so a chip file with 2^32
/// NPUs would otherwise ask for gigabytes of SVG. Real chips have 4 to 64.
pub const MAX_LANES: u64 = 4096;

const CELL_W: u64 = 34;
const CELL_H: u64 = 22;
const LEFT: u64 = 120;
const TOP: u64 = 58;
const COLOURS: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
];

use tpusim_svg::esc;

/// Draw the lane map of `tensor` on `chip` as a standalone SVG document.
pub fn lane_map(chip: &Chip, tensor: &Placement) -> Result<String> {
    if !tensor.layout.is_local() {
        return Err(LmemError::NotLocal { what: "a lane map" });
    }
    if chip.npu_num > MAX_LANES {
        return Err(LmemError::TooManyLanes {
            npu_num: chip.npu_num,
            max: MAX_LANES,
        });
    }
    tensor.validate(chip)?;
    let st = tensor.storage(chip)?;
    let s = tensor.strides(chip)?;
    let lane_bytes = tensor.lane_bytes(chip)?;
    let rows = rows_per_batch(chip, tensor.shape.c, tensor.start_npu)?;
    let groups = tensor.shape.n.div_ceil(st.n_pack);
    let total_rows = rows.saturating_mul(groups);
    let drawn = total_rows.min(MAX_ROWS);
    let lanes = chip.npu_num;
    let data_slots = match tensor.layout {
        crate::shape::LocalLayout::Line => tensor.shape.depth() * tensor.shape.h * tensor.shape.w,
        _ => s.d.saturating_mul(tensor.shape.depth()),
    };
    let data_frac = if s.c == 0 {
        1.0
    } else {
        (data_slots as f64 / s.c as f64).min(1.0)
    };
    let width = LEFT + lanes * CELL_W + 20;
    let height = TOP + drawn * CELL_H + 60;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="10">"#
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="8" y="16" font-size="13">{} — {} {} {} layout, start NPU {}, start address {}</text>"#,
        esc(&chip.name),
        tensor.shape,
        tensor.dtype,
        tensor.layout,
        tensor.start_npu,
        tensor.start_addr
    );
    let _ = writeln!(
        o,
        r#"<text x="8" y="32">strides (slots) N {} C {} H {} W {}; EU_NUM {}; {} bytes per lane; rows per batch {}{}</text>"#,
        s.n,
        s.c,
        s.h,
        s.w,
        st.eu_num,
        lane_bytes,
        rows,
        if st.n_pack > 1 {
            format!("; 4N: {} batches per slot", st.n_pack)
        } else {
            String::new()
        }
    );
    for lane in 0..lanes {
        let x = LEFT + lane * CELL_W;
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="middle">L{lane}</text>"#,
            x + CELL_W / 2,
            TOP - 6
        );
    }
    let slot_bytes = |slots: u64| (slots.saturating_mul(st.slot_bits)) / 8;
    for i in 0..drawn {
        let (g, r) = (i / rows, i % rows);
        let y = TOP + i * CELL_H;
        let off = tensor.start_addr + slot_bytes(g.saturating_mul(s.n) + r.saturating_mul(s.c));
        let label = if r == 0 {
            if st.n_pack > 1 {
                format!(
                    "n{}-{} @{off}",
                    g * st.n_pack,
                    (g * st.n_pack + st.n_pack - 1).min(tensor.shape.n - 1)
                )
            } else {
                format!("n{g} @{off}")
            }
        } else {
            format!("@{off}")
        };
        let _ = writeln!(
            o,
            r#"<text x="{}" y="{}" text-anchor="end">{label}</text>"#,
            LEFT - 6,
            y + 15
        );
        let colour = COLOURS[(g % COLOURS.len() as u64) as usize];
        for lane in 0..lanes {
            let x = LEFT + lane * CELL_W;
            let pos = r * lanes + lane;
            match pos
                .checked_sub(tensor.start_npu)
                .filter(|&c| c < tensor.shape.c)
            {
                Some(c) => {
                    let dw = ((CELL_W - 2) as f64 * data_frac).round().max(1.0) as u64;
                    let _ = writeln!(
                        o,
                        r##"<rect class="pad" x="{}" y="{}" width="{}" height="{}" fill="{colour}" fill-opacity="0.3" stroke="#333" stroke-width="0.5"/>"##,
                        x + 1,
                        y + 1,
                        CELL_W - 2,
                        CELL_H - 2
                    );
                    let _ = writeln!(
                        o,
                        r#"<rect class="data" x="{}" y="{}" width="{dw}" height="{}" fill="{colour}"><title>n{} c{c} lane {lane} offset {off}</title></rect>"#,
                        x + 1,
                        y + 1,
                        CELL_H - 2,
                        g * st.n_pack
                    );
                    let _ = writeln!(
                        o,
                        r#"<text x="{}" y="{}" text-anchor="middle" fill="white">c{c}</text>"#,
                        x + CELL_W / 2,
                        y + 15
                    );
                }
                None => {
                    let _ = writeln!(
                        o,
                        r##"<rect class="unused" x="{}" y="{}" width="{}" height="{}" fill="#eee" stroke="#bbb" stroke-dasharray="2,2"><title>unused: lane {lane} offset {off}</title></rect>"##,
                        x + 1,
                        y + 1,
                        CELL_W - 2,
                        CELL_H - 2
                    );
                }
            }
        }
    }
    let mut y = TOP + drawn * CELL_H + 18;
    if drawn < total_rows {
        let _ = writeln!(
            o,
            r#"<text x="8" y="{y}">… {} more rows not drawn</text>"#,
            total_rows - drawn
        );
        y += 16;
    }
    let _ = writeln!(
        o,
        r#"<text x="8" y="{y}">solid: data; pale: EU padding of the channel region ({:.0}% data); dashed grey: unused slot</text>"#,
        data_frac * 100.0
    );
    o.push_str("</svg>\n");
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ElementType, LocalLayout, TensorShape};

    #[test]
    fn too_many_lanes_is_an_error_not_an_allocation() {
        // Fuzz finding: `lmem map --npu-num 4294967296` aborted allocating 3 GB.
        let chip = Chip::from_toml(
            "name='wide'\nnpu_num=4294967296\neu_bytes=64\nlane_bytes=65536\nbanks=4",
        )
        .unwrap();
        let t = Placement::new(
            TensorShape::nchw(1, 1, 1, 1),
            ElementType::F16,
            LocalLayout::Aligned,
        );
        let e = lane_map(&chip, &t).unwrap_err().to_string();
        assert!(
            e.contains("at most 4096 lanes") && e.contains("4294967296"),
            "{e}"
        );
    }

    #[test]
    fn seed_figure_start_2() {
        let chip = Chip::from_toml("name='toy'\nnpu_num=4\neu_bytes=64\nlane_bytes=65536\nbanks=4")
            .unwrap();
        let mut t = Placement::new(
            TensorShape::nchw(2, 3, 4, 5),
            ElementType::F16,
            LocalLayout::Aligned,
        );
        t.start_npu = 2;
        let svg = lane_map(&chip, &t).unwrap();
        // 2 batches x 2 rows x 4 lanes = 16 cells: 6 channels drawn, 10 unused.
        assert_eq!(svg.matches(r#"class="data""#).count(), 6);
        assert_eq!(svg.matches(r#"class="unused""#).count(), 10);
        assert!(
            svg.contains("n1 @128"),
            "second batch starts at 2 rows x 32 f16 = 128 bytes"
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        t.layout = LocalLayout::Global;
        assert!(lane_map(&chip, &t).is_err());
    }
}
