//! Output of `tpusim lmem` verbs: readable tables by default, one JSON document with
//! `--json` (snake_case fields; sizes in bytes, strides in elements).

use crate::fmt::bytes;
use crate::util::print_json;
use anyhow::Result;
use serde::Serialize;
use tpusim_lmem::{
    global_bytes, lanes_used, rows_per_batch, Chip, ElementAddress, ElementIndex, LmemError,
    Placement,
};
use tpusim_planner::tpumlir::ChipCalibration;
use tpusim_planner::{ChipTiming, NpuChip};

#[derive(Serialize)]
struct ChipRow<'a> {
    name: &'a str,
    npu_num: u64,
    eu_bytes: u64,
    lane_bytes: u64,
    banks: u64,
    bank_bytes: u64,
    total_bytes: u64,
    align_4n: bool,
    #[serde(flatten)]
    timing: &'a ChipTiming,
    #[serde(flatten)]
    tpu_mlir: &'a ChipCalibration,
    source: Option<&'a str>,
}

fn row(npu: &NpuChip) -> ChipRow<'_> {
    let c = &npu.geometry;
    ChipRow {
        name: &c.name,
        npu_num: c.npu_num,
        eu_bytes: c.eu_bytes,
        lane_bytes: c.lane_bytes,
        banks: c.banks,
        bank_bytes: c.bank_bytes(),
        total_bytes: c.total_bytes(),
        align_4n: c.align_4n,
        timing: &npu.timing,
        tpu_mlir: &npu.tpu_mlir,
        source: c.source.as_deref(),
    }
}

/// `tpusim lmem presets`.
pub fn presets(chips: &[NpuChip], json: bool) -> Result<()> {
    if json {
        return print_json(&chips.iter().map(row).collect::<Vec<_>>());
    }
    println!(
        "{:<9} {:>7} {:>8} {:>10} {:>5} {:>10} {:>10}  notes",
        "preset", "NPU_NUM", "EU_BYTES", "per lane", "banks", "bank", "total"
    );
    for c in chips.iter().map(|npu| &npu.geometry) {
        println!(
            "{:<9} {:>7} {:>8} {:>10} {:>5} {:>10} {:>10}  {}",
            c.name,
            c.npu_num,
            c.eu_bytes,
            bytes(c.lane_bytes as f64),
            c.banks,
            bytes(c.bank_bytes() as f64),
            bytes(c.total_bytes() as f64),
            if c.align_4n {
                "4N layout for 8/16-bit"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// `tpusim lmem show`.
pub fn show(npu: &NpuChip, json: bool, toml: bool) -> Result<()> {
    if toml {
        print!("{}", npu.to_toml());
        return Ok(());
    }
    if json {
        return print_json(&row(npu));
    }
    let (c, t) = (&npu.geometry, &npu.timing);
    println!("chip                     {}", c.name);
    println!("npu_num (lanes)          {}", c.npu_num);
    println!("eu_bytes                 {}", c.eu_bytes);
    println!(
        "lane_bytes               {} ({})",
        c.lane_bytes,
        bytes(c.lane_bytes as f64)
    );
    println!(
        "banks                    {} of {} bytes",
        c.banks,
        c.bank_bytes()
    );
    println!(
        "total local memory       {} bytes ({})",
        c.total_bytes(),
        bytes(c.total_bytes() as f64)
    );
    println!(
        "4N layout                {}",
        if c.align_4n {
            "yes (8-bit: 4 batches, 16-bit: 2 per 4-byte slot)"
        } else {
            "no"
        }
    );
    println!(
        "eu_num f32/f16/s8/s4     {}",
        ["f32", "f16", "s8", "s4"]
            .iter()
            .map(|t| t
                .parse()
                .ok()
                .and_then(|t| tpusim_lmem::eu_num(c, t).ok())
                .map_or("-".into(), |e: u64| e.to_string()))
            .collect::<Vec<_>>()
            .join("/")
    );
    // the figures the file gives, by their TOML keys (a new figure shows up here)
    let figures = [
        toml::Table::try_from(t),
        toml::Table::try_from(&npu.tpu_mlir),
    ];
    let given: Vec<(String, toml::Value)> = figures
        .into_iter()
        .flat_map(|table| table.unwrap_or_default())
        .collect();
    if given.is_empty() {
        println!("timing figures           none (the planner's structural fallback)");
    }
    for (name, v) in given {
        let shown = match v {
            toml::Value::Float(x) if x.abs() >= 1e6 => format!("{x:e}"),
            other => other.to_string(),
        };
        println!("{name:<24} {shown}");
    }
    if let Some(s) = &c.source {
        println!("source                   {s}");
    }
    Ok(())
}

#[derive(Serialize)]
struct StridesOut<'a> {
    chip: &'a str,
    npu_num: u64,
    eu_bytes: u64,
    shape: Vec<u64>,
    dtype: String,
    layout: &'static str,
    start_npu: u64,
    start_addr: u64,
    eu_num: u64,
    n: u64,
    c: u64,
    d: u64,
    h: u64,
    w: u64,
    n_pack: u64,
    rows_per_batch: Option<u64>,
    lane_bytes: Option<u64>,
    lanes_used: Option<u64>,
    global_bytes: u64,
    fits: Option<bool>,
    end_addr: Option<u64>,
    first_bank: Option<u64>,
    last_bank: Option<u64>,
}

/// `tpusim lmem strides` (and the summary of `map`).
pub fn strides(chip: &Chip, t: &Placement, json: bool) -> Result<()> {
    t.validate(chip)?;
    let st = t.storage(chip)?;
    let s = t.strides(chip)?;
    let local = t.layout.is_local();
    let sh = &t.shape;
    let mut shape = vec![sh.n, sh.c];
    if let Some(d) = sh.d {
        shape.push(d);
    }
    shape.extend([sh.h, sh.w]);
    let (lane_bytes, fit) = if local {
        let lb = t.lane_bytes(chip)?;
        match t.fit(chip) {
            Ok(f) => (Some(lb), Some(Some(f))),
            Err(LmemError::DoesNotFit { .. }) => (Some(lb), Some(None)),
            Err(e) => return Err(e.into()),
        }
    } else {
        (None, None)
    };
    let out = StridesOut {
        chip: &chip.name,
        npu_num: chip.npu_num,
        eu_bytes: chip.eu_bytes,
        shape,
        dtype: t.dtype.to_string(),
        layout: t.layout.name(),
        start_npu: t.start_npu,
        start_addr: t.start_addr,
        eu_num: st.eu_num,
        n: s.n,
        c: s.c,
        d: s.d,
        h: s.h,
        w: s.w,
        n_pack: st.n_pack,
        rows_per_batch: if local {
            Some(rows_per_batch(chip, sh.c, t.start_npu)?)
        } else {
            None
        },
        lane_bytes,
        lanes_used: local.then(|| lanes_used(chip, sh)),
        global_bytes: global_bytes(sh, t.dtype)?,
        fits: fit.map(|f| f.is_some()),
        end_addr: fit.flatten().map(|f| f.end),
        first_bank: fit.flatten().map(|f| f.first_bank),
        last_bank: fit.flatten().map(|f| f.last_bank),
    };
    if json {
        return print_json(&out);
    }
    println!(
        "chip        {} ({} lanes, EU_BYTES {}, {} per lane)",
        chip.name,
        chip.npu_num,
        chip.eu_bytes,
        bytes(chip.lane_bytes as f64)
    );
    println!(
        "tensor      {} {} {} layout, start NPU {}, start address {}",
        sh, t.dtype, t.layout, t.start_npu, t.start_addr
    );
    println!(
        "eu_num      {}{}",
        st.eu_num,
        if st.n_pack > 1 {
            format!(
                " (4N: {} batches per 4-byte slot; strides in slots)",
                st.n_pack
            )
        } else {
            String::new()
        }
    );
    if sh.d.is_some() {
        println!(
            "strides     N {}  C {}  D {}  H {}  W {}  (elements)",
            s.n, s.c, s.d, s.h, s.w
        );
    } else {
        println!(
            "strides     N {}  C {}  H {}  W {}  (elements)",
            s.n, s.c, s.h, s.w
        );
    }
    if local {
        println!("rows/batch  {}", out.rows_per_batch.unwrap_or(0));
        println!(
            "lane_bytes  {} (reserved in each of {} lanes used)",
            lane_bytes.unwrap_or(0),
            out.lanes_used.unwrap_or(0)
        );
        match fit.flatten() {
            Some(f) => println!(
                "fits        yes: bytes {}..{} of {}, banks {}..={} ({} bytes each)",
                f.start,
                f.end,
                chip.lane_bytes,
                f.first_bank,
                f.last_bank,
                chip.bank_bytes()
            ),
            None => println!(
                "fits        NO: needs {} bytes from address {}, lane holds {}",
                lane_bytes.unwrap_or(0),
                t.start_addr,
                chip.lane_bytes
            ),
        }
    }
    println!("global      {} bytes contiguous", out.global_bytes);
    Ok(())
}

#[derive(Serialize)]
struct AddrOut {
    index: [u64; 5],
    lane: Option<u64>,
    offset: u64,
    bit: u64,
    address: u64,
}

/// `tpusim lmem addr`.
pub fn address(idx: &ElementIndex, a: &ElementAddress, json: bool) -> Result<()> {
    if json {
        return print_json(&AddrOut {
            index: [idx.n, idx.c, idx.d, idx.h, idx.w],
            lane: a.lane,
            offset: a.offset,
            bit: a.bit,
            address: a.address,
        });
    }
    let bit = if a.bit != 0 {
        format!(" bit {}", a.bit)
    } else {
        String::new()
    };
    match a.lane {
        Some(l) => println!(
            "element (n,c,d,h,w) = ({idx}): lane {l}, offset {}{bit}, address {}",
            a.offset, a.address
        ),
        None => println!(
            "element (n,c,d,h,w) = ({idx}): global offset {}{bit}",
            a.offset
        ),
    }
    Ok(())
}

#[derive(Serialize)]
struct LocateOut {
    lane: u64,
    offset: u64,
    used: bool,
    n: Option<u64>,
    c: Option<u64>,
    d: Option<u64>,
    h: Option<u64>,
    w: Option<u64>,
}

/// `tpusim lmem locate`.
pub fn located(lane: u64, offset: u64, found: Option<&ElementIndex>, json: bool) -> Result<()> {
    if json {
        return print_json(&LocateOut {
            lane,
            offset,
            used: found.is_some(),
            n: found.map(|i| i.n),
            c: found.map(|i| i.c),
            d: found.map(|i| i.d),
            h: found.map(|i| i.h),
            w: found.map(|i| i.w),
        });
    }
    match found {
        Some(i) => println!("lane {lane} offset {offset}: element (n,c,d,h,w) = ({i})"),
        None => println!("lane {lane} offset {offset}: unused (padding, another batch's empty slot, or outside the tensor)"),
    }
    Ok(())
}
