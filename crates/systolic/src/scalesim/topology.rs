//! SCALE-Sim topology CSVs: conv layers (`Layer name, IFMAP Height, IFMAP Width,
//! Filter Height, Filter Width, Channels, Num Filter, Strides,`) and GEMM mode
//! (`Layer, M, N, K,`). Told apart by the header, or forced. Either may carry one more
//! column, SCALE-Sim 3's N:M sparsity ratio of the layer's filter (`2:4`; absent: 1:1),
//! which only a config with `[sparsity] SparsitySupport: true` uses.

use crate::error::{Result, SystolicError};
use crate::shape::{Conv, Gemm};

/// Which topology format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopoFormat {
    /// Conv layers.
    Conv,
    /// GEMM (M, N, K) rows.
    Gemm,
}

/// An N:M structured-sparsity ratio: N weights kept in every block of M along the
/// filter's window (SCALE-Sim keeps the first N of each block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SparsityRatio {
    /// Weights kept per block (1 ≤ N ≤ M).
    pub n: u64,
    /// Block length.
    pub m: u64,
}

impl SparsityRatio {
    /// 1:1, a dense layer (a topology row without a sparsity column).
    pub const DENSE: SparsityRatio = SparsityRatio { n: 1, m: 1 };

    /// Parse `N:M` (whitespace around either number allowed), 1 ≤ N ≤ M ≤ 2^32.
    pub fn parse(text: &str) -> std::result::Result<SparsityRatio, String> {
        let bad = || format!("sparsity '{text}' is not N:M with 1 <= N <= M (e.g. 2:4)");
        let (n, m) = text.split_once(':').ok_or_else(bad)?;
        let num = |s: &str| s.trim().parse::<u64>().ok().filter(|v| *v <= 1 << 32);
        match (num(n), num(m)) {
            (Some(n), Some(m)) if n >= 1 && n <= m => Ok(SparsityRatio { n, m }),
            _ => Err(bad()),
        }
    }
}

/// One layer as SCALE-Sim sees it (a GEMM is stored as a conv the way SCALE-Sim does:
/// ifmap M×K, one K-wide filter row, N filters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopoLayer {
    /// Layer name (depthwise `DP` layers are split per channel, as SCALE-Sim does:
    /// `<name>Channel_<i>`).
    pub name: String,
    /// IFMAP height (already padded: SCALE-Sim has no padding column).
    pub ifmap_h: u64,
    /// IFMAP width.
    pub ifmap_w: u64,
    /// Filter height.
    pub filt_h: u64,
    /// Filter width.
    pub filt_w: u64,
    /// Input channels.
    pub channels: u64,
    /// Number of filters (output channels).
    pub num_filt: u64,
    /// Stride (both directions).
    pub stride: u64,
    /// The filter's N:M sparsity ratio (the topology's sparsity column; 1:1 without).
    pub sparsity: SparsityRatio,
}

impl TopoLayer {
    /// A GEMM row (`Layer, M, N, K`) as SCALE-Sim stores it: an M×K IFMAP, one K-wide
    /// filter row, N filters.
    pub fn gemm(name: String, m: u64, n: u64, k: u64) -> TopoLayer {
        TopoLayer {
            name,
            ifmap_h: m,
            ifmap_w: k,
            filt_h: 1,
            filt_w: k,
            channels: 1,
            num_filt: n,
            stride: 1,
            sparsity: SparsityRatio::DENSE,
        }
    }

    /// Output size as SCALE-Sim computes it: ⌈(H − F + S) / S⌉ (windows overhanging
    /// the bottom/right edge count, with their missing pixels unread).
    pub fn scalesim_ofmap(&self) -> (u64, u64) {
        let f = |i: u64, k: u64, s: u64| (i - k + s).div_ceil(s);
        (
            f(self.ifmap_h, self.filt_h, self.stride),
            f(self.ifmap_w, self.filt_w, self.stride),
        )
    }
    /// The GEMM SCALE-Sim runs: M = output pixels, K = FH·FW·C, N = filters.
    pub fn scalesim_gemm(&self) -> Result<Gemm> {
        let (oh, ow) = self.scalesim_ofmap();
        Gemm::new(
            oh * ow,
            self.filt_h * self.filt_w * self.channels,
            self.num_filt,
        )
    }
    /// The layer as an ordinary convolution (no padding, batch 1, output
    /// ⌊(H − F)/S⌋ + 1: only windows that fit).
    pub fn conv(&self) -> Conv {
        let mut c = Conv::simple(
            self.ifmap_h,
            self.ifmap_w,
            self.channels,
            self.filt_h,
            self.filt_w,
            self.num_filt,
        );
        c.stride_h = self.stride;
        c.stride_w = self.stride;
        c
    }
}

fn terr(file: &str, line: usize, msg: String) -> SystolicError {
    SystolicError::Topology {
        file: file.to_string(),
        line,
        msg,
    }
}

/// Layers a topology may run in all, a depthwise layer counting one per channel (as
/// SCALE-Sim runs it): a bound on the memory and time a file can ask for.
pub const MAX_LAYERS: usize = 100_000;

/// Parse a topology CSV. `format`: `None` tells the format from the header (`Layer,
/// M, N, K` is GEMM, anything else conv). Rows may end with or without SCALE-Sim's
/// trailing comma; a cell after the last dimension is the layer's N:M sparsity ratio.
pub fn parse_topology(
    text: &str,
    file: &str,
    format: Option<TopoFormat>,
) -> Result<(TopoFormat, Vec<TopoLayer>)> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines
        .next()
        .ok_or_else(|| terr(file, 1, "empty file (expected a header row)".into()))?;
    let hcells: Vec<String> = header
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let detected = if hcells.len() >= 4 && hcells[1] == "m" && hcells[2] == "n" && hcells[3] == "k"
    {
        TopoFormat::Gemm
    } else {
        TopoFormat::Conv
    };
    let fmt = format.unwrap_or(detected);
    let mut out = Vec::new();
    for (no, line) in lines {
        let ln = no + 1;
        let mut cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.last() == Some(&"") {
            cells.pop();
        }
        let need = if fmt == TopoFormat::Gemm { 4 } else { 8 };
        if cells.len() < need {
            return Err(terr(
                file,
                ln,
                format!(
                    "expected at least {need} columns, got {}: '{line}'",
                    cells.len()
                ),
            ));
        }
        let name = cells[0].to_string();
        let num = |i: usize, what: &str| -> Result<u64> {
            let v: u64 = cells[i].parse().map_err(|_| {
                terr(
                    file,
                    ln,
                    format!("{what} '{}' is not a whole number", cells[i]),
                )
            })?;
            if v == 0 {
                return Err(terr(file, ln, format!("{what} must be at least 1")));
            }
            if v > (1 << 32) {
                return Err(terr(file, ln, format!("{what} {v} is larger than 2^32")));
            }
            Ok(v)
        };
        let mut layer = if fmt == TopoFormat::Gemm {
            TopoLayer::gemm(name, num(1, "M")?, num(2, "N")?, num(3, "K")?)
        } else {
            TopoLayer {
                name,
                ifmap_h: num(1, "IFMAP Height")?,
                ifmap_w: num(2, "IFMAP Width")?,
                filt_h: num(3, "Filter Height")?,
                filt_w: num(4, "Filter Width")?,
                channels: num(5, "Channels")?,
                num_filt: num(6, "Num Filter")?,
                stride: num(7, "Strides")?,
                sparsity: SparsityRatio::DENSE,
            }
        };
        if let Some(cell) = cells.get(need) {
            layer.sparsity = SparsityRatio::parse(cell).map_err(|e| terr(file, ln, e))?;
        }
        if layer.filt_h > layer.ifmap_h || layer.filt_w > layer.ifmap_w {
            return Err(terr(
                file,
                ln,
                format!(
                    "filter {}x{} is larger than the IFMAP {}x{}",
                    layer.filt_h, layer.filt_w, layer.ifmap_h, layer.ifmap_w
                ),
            ));
        }
        if let Err(e) = layer.scalesim_gemm() {
            return Err(terr(file, ln, e.to_string()));
        }
        let depthwise = fmt == TopoFormat::Conv && layer.name.contains("DP");
        let runs = if depthwise { layer.channels } else { 1 };
        let total = (out.len() as u64).saturating_add(runs);
        if total > MAX_LAYERS as u64 {
            return Err(terr(
                file,
                ln,
                format!(
                    "the topology runs {total} layers by this row (a depthwise layer runs \
                     one per channel; limit {MAX_LAYERS} in all)"
                ),
            ));
        }
        if depthwise {
            for ch in 0..layer.channels {
                out.push(TopoLayer {
                    name: format!("{}Channel_{ch}", layer.name),
                    channels: 1,
                    ..layer.clone()
                });
            }
        } else {
            out.push(layer);
        }
    }
    if out.is_empty() {
        return Err(terr(file, 1, "no layers".into()));
    }
    Ok((fmt, out))
}
