//! `tpusim layout …`: XLA tiled layouts — parse/print/validate shapes, map indices,
//! sizes and waste, TPU default layouts, convert real data, HLO padding reports.

mod convert;
mod hlo;

use crate::util::print_json;
use anyhow::{anyhow, bail, Context, Result};
use clap::Subcommand;
use std::io::Read;
use std::path::PathBuf;
use tpusim_layout::{
    doc_default, parse_valid, shape_info, sizes, tpu_default, ArrayShape, ElementType, Geometry,
    Shape, ShapeInfo, TpuGen,
};

/// Verbs of `tpusim layout`.
#[derive(Subcommand)]
pub enum LayoutCmd {
    /// Parse, validate and describe a shape: canonical text, physical shape, sizes, waste.
    ///
    /// Example: tpusim layout info 'bf16[1,1000]{1,0:T(2,128)(2,1)}'
    Info {
        /// Shape in XLA text, e.g. 'f32[3,5]{1,0:T(2,2)}' (type names in any case; a
        /// tuple shows each array).
        shape: String,
        /// Print one JSON document instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Physical linear index (in elements) of a logical index.
    ///
    /// Example: tpusim layout index 'f32[3,5]{1,0:T(2,2)}' 2,3   → 17
    Index {
        /// Array shape in XLA text.
        shape: String,
        /// Logical index, comma-separated, most major first (e.g. 2,3).
        index: String,
        /// Print JSON ({"linear_index": N}).
        #[arg(long)]
        json: bool,
    },
    /// Logical index stored at a physical linear index (or: padding).
    ///
    /// Example: tpusim layout unindex 'f32[3,5]{1,0:T(2,2)}' 17   → 2,3
    Unindex {
        /// Array shape in XLA text.
        shape: String,
        /// Physical linear index in elements (0 ≤ N < physical elements).
        linear: u64,
        /// Print JSON ({"logical_index": [..]} or {"padding": true}).
        #[arg(long)]
        json: bool,
    },
    /// Grid of the linear index of every element (rank 2; rank 1 as one row).
    ///
    /// Example: tpusim layout map 'bf16[4,8]{1,0:T(2,4)(2,1)}' --svg fig2.svg
    Map {
        /// Array shape in XLA text, at most 1,000,000 elements.
        shape: String,
        /// Print JSON ({"linear_indices": [...]} in logical row-major order).
        #[arg(long)]
        json: bool,
        /// Also draw the grid (tiles outlined, padding shown) as SVG into FILE.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
    },
    /// The layout XLA:TPU picks for an array argument (incl. dimension reordering).
    ///
    /// Example: tpusim layout default 'f32[1000,1]' 'bf16[1,1000]' --tpu v5e
    Default {
        /// Shapes as TYPE[DIMS] (e.g. bf16[1,1000]; aliases such as float32 work);
        /// '-' reads one shape per line from stdin.
        #[arg(required = true)]
        shapes: Vec<String>,
        /// TPU generation: v2, v3, v4, v5e, v5p, v6e, tpu7x.
        #[arg(long, default_value = "v5e")]
        tpu: String,
        /// Use the seed document's simpler table instead (no reordering).
        #[arg(long)]
        doc: bool,
        /// Print JSON: a list of {"input", "shape", "array_size_bytes"}.
        #[arg(long)]
        json: bool,
    },
    /// Convert array data between two layouts of the same array.
    ///
    /// A side whose layout is untiled row-major is a .npy file (the element's numpy
    /// dtype; bf16 and f8 types as uint of their size, or void as ml_dtypes saves them);
    /// any other side is the raw physical bytes of that layout (exactly
    /// array_size_bytes long), and a file named .npy is refused for it. Padding is zero.
    /// Outputs are created with the shell's mode (0644 under the usual umask); an
    /// existing output keeps its mode, a symlink is written through.
    ///
    /// Example: tpusim layout convert --from 'f32[300,500]' --to 'f32[300,500]{1,0:T(8,128)}' in.npy out.bin
    Convert {
        /// Layout of IN (XLA text).
        #[arg(long)]
        from: String,
        /// Layout of OUT (XLA text; same type and dims as --from).
        #[arg(long)]
        to: String,
        /// Input file.
        input: PathBuf,
        /// Output file (written atomically).
        output: PathBuf,
        /// Convert in bands of about this many bytes along dim 0 (bytes; e.g. 64MiB),
        /// reading the next band ahead and writing each finished band back to disk, so
        /// that memory use stays bounded whatever the array size. Default: 256MiB bands
        /// when input + output reach 1GiB, else one piece. Layouts that do not split
        /// along dim 0 (dim 0 not major, L(n) padding) always convert in one piece.
        #[arg(long, value_name = "BYTES")]
        piece_bytes: Option<String>,
        /// Take an input .npy whose dtype only matches in size (float16 data for a bf16
        /// layout, uint32 for s32) as raw bits instead of refusing it.
        #[arg(long)]
        reinterpret: bool,
        /// Print a JSON summary.
        #[arg(long)]
        json: bool,
    },
    /// Padding report of an HLO text dump: arrays by allocated bytes, largest waste first.
    ///
    /// Example: tpusim layout hlo module.after_optimizations.txt --top 20
    Hlo {
        /// HLO text module as XLA dumps it (e.g. *.after_optimizations.txt).
        file: PathBuf,
        /// Show only the N arrays that waste the most bytes.
        #[arg(long, default_value_t = 30)]
        top: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Run one `tpusim layout` verb.
pub fn run(cmd: LayoutCmd) -> Result<()> {
    match cmd {
        LayoutCmd::Info { shape, json } => info(&shape, json),
        LayoutCmd::Index { shape, index, json } => index_cmd(&shape, &index, json),
        LayoutCmd::Unindex {
            shape,
            linear,
            json,
        } => unindex(&shape, linear, json),
        LayoutCmd::Map { shape, json, svg } => map(&shape, json, svg),
        LayoutCmd::Default {
            shapes,
            tpu,
            doc,
            json,
        } => default(&shapes, &tpu, doc, json),
        LayoutCmd::Convert {
            from,
            to,
            input,
            output,
            piece_bytes,
            reinterpret,
            json,
        } => {
            let piece_bytes = piece_bytes
                .as_deref()
                .map(crate::util::parse_bytes)
                .transpose()
                .context("--piece-bytes")?;
            convert::run(&from, &to, &input, &output, piece_bytes, reinterpret, json)
        }
        LayoutCmd::Hlo { file, top, json } => hlo::run(&file, top, json),
    }
}

/// Parse and validate an array shape (a tuple is an error here).
pub(crate) fn array(text: &str) -> Result<ArrayShape> {
    match parse_valid(text)? {
        Shape::Array(a) => Ok(a),
        _ => bail!("'{text}' is not an array shape (tuples and tokens have no index mapping)"),
    }
}

fn info(text: &str, json: bool) -> Result<()> {
    let shape = parse_valid(text)?;
    let arrays = shape.arrays();
    if arrays.is_empty() {
        bail!("'{text}' holds no array");
    }
    let infos: Vec<ShapeInfo> = arrays
        .iter()
        .map(|a| shape_info(a))
        .collect::<std::result::Result<_, _>>()?;
    if json {
        if matches!(shape, Shape::Array(_)) {
            return print_json(&infos[0]);
        }
        return print_json(&infos);
    }
    for (i, inf) in infos.iter().enumerate() {
        if i > 0 {
            println!();
        }
        let tiles: String = inf
            .tiles
            .iter()
            .map(|t| {
                let v: Vec<String> = t.iter().map(|x| x.to_string()).collect();
                format!("({})", v.join(","))
            })
            .collect();
        let unknown = || "unknown".to_string();
        let phys = inf.physical_shape.as_ref().map_or_else(unknown, |p| {
            let v: Vec<String> = p.iter().map(u64::to_string).collect();
            format!("[{}]", v.join(","))
        });
        let bytes = |b: Option<u64>| b.map_or_else(unknown, |b| b.to_string());
        println!("shape            {}", inf.shape);
        println!(
            "element          {} ({} bits in memory)",
            inf.element_type, inf.element_bits
        );
        let dims: Vec<String> = inf.dims.iter().map(|d| d.to_string()).collect();
        println!("dims             [{}]", dims.join(","));
        println!("minor_to_major   {:?}", inf.minor_to_major);
        println!(
            "tiles            {}",
            if tiles.is_empty() {
                "none".into()
            } else {
                tiles
            }
        );
        println!("physical shape   {phys}");
        println!("logical bytes    {}", bytes(inf.logical_bytes));
        println!(
            "allocated bytes  {} (XLA ArraySize)",
            bytes(inf.array_size_bytes)
        );
        println!(
            "exact bytes      {} (fully expanded tiling)",
            bytes(inf.exact_size_bytes)
        );
        println!(
            "expansion        {}",
            inf.expansion.map_or_else(unknown, |e| format!("{e:.3}x"))
        );
        for w in &inf.warnings {
            println!("warning          {w}");
        }
    }
    Ok(())
}

fn parse_index(text: &str) -> Result<Vec<u64>> {
    let t = text
        .trim()
        .trim_start_matches(['[', '{', '('])
        .trim_end_matches([']', '}', ')']);
    if t.trim().is_empty() {
        return Ok(Vec::new());
    }
    t.split(',')
        .map(|p| {
            p.trim().parse::<u64>().map_err(|_| {
                anyhow!(
                    "'{}' in index '{text}' is not a non-negative integer",
                    p.trim()
                )
            })
        })
        .collect()
}

fn index_cmd(shape: &str, index: &str, json: bool) -> Result<()> {
    let a = array(shape)?;
    let idx = parse_index(index)?;
    let n = Geometry::new(&a)?.linear_index(&idx)?;
    if json {
        print_json(
            &serde_json::json!({ "shape": a.to_string(), "logical_index": idx, "linear_index": n }),
        )
    } else {
        println!("{n}");
        Ok(())
    }
}

fn unindex(shape: &str, linear: u64, json: bool) -> Result<()> {
    let a = array(shape)?;
    let r = Geometry::new(&a)?.logical_index(linear)?;
    match (json, r) {
        (true, Some(idx)) => print_json(&serde_json::json!({
            "shape": a.to_string(), "linear_index": linear, "logical_index": idx, "padding": false })),
        (true, None) => print_json(&serde_json::json!({
            "shape": a.to_string(), "linear_index": linear, "logical_index": null, "padding": true })),
        (false, Some(idx)) => {
            let v: Vec<String> = idx.iter().map(u64::to_string).collect();
            println!("{}", v.join(","));
            Ok(())
        }
        (false, None) => {
            println!("padding");
            Ok(())
        }
    }
}

const MAP_LIMIT: u64 = 1_000_000;

fn map(shape: &str, json: bool, svg: Option<PathBuf>) -> Result<()> {
    let a = array(shape)?;
    let g = Geometry::new(&a)?;
    if g.logical_elements() > MAP_LIMIT {
        bail!(
            "'{a}' has {} elements; map shows at most {MAP_LIMIT}",
            g.logical_elements()
        );
    }
    if a.rank() > 2 {
        bail!("map draws rank 1 and 2 arrays; '{a}' has rank {}", a.rank());
    }
    let cols = g.logical_dims().last().copied().unwrap_or(1) as usize;
    let idx = g.all_linear_indices();
    if let Some(path) = &svg {
        let text =
            tpusim_layout::svg::grid(&a, &g, &idx, MAP_LIMIT).map_err(|e| anyhow!("--svg: {e}"))?;
        crate::util::write_atomic(path, text.as_bytes())?;
    }
    if json {
        return print_json(&serde_json::json!({
            "shape": a.to_string(),
            "rows": idx.len().checked_div(cols).unwrap_or(0),
            "cols": cols,
            "physical_elements": g.physical_elements(),
            "linear_indices": idx,
        }));
    }
    let width = g.physical_elements().max(1).to_string().len();
    for row in idx.chunks(cols.max(1)) {
        let cells: Vec<String> = row.iter().map(|n| format!("{n:>width$}")).collect();
        println!("{}", cells.join(" "));
    }
    Ok(())
}

/// Parse `TYPE[DIMS]` (aliases allowed, no layout) into a type and static dims.
fn type_and_dims(text: &str) -> Result<(ElementType, Vec<u64>)> {
    let t = text.trim();
    let open = t
        .find('[')
        .ok_or_else(|| anyhow!("'{t}': expected TYPE[DIMS], e.g. bf16[1,1000]"))?;
    let ty: ElementType = t[..open].trim().parse()?;
    let rest = t[open + 1..]
        .strip_suffix(']')
        .ok_or_else(|| anyhow!("'{t}': expected TYPE[DIMS] ending in ']' (no layout)"))?;
    let dims = parse_index(rest).with_context(|| format!("dims of '{t}'"))?;
    Ok((ty, dims))
}

/// Most bytes of shapes `layout default -` reads from stdin (64 MiB).
const STDIN_LIMIT: u64 = 64 << 20;

fn default(shapes: &[String], tpu: &str, doc: bool, json: bool) -> Result<()> {
    let gen: TpuGen = tpu.parse()?;
    let mut inputs: Vec<String> = Vec::new();
    for s in shapes {
        if s == "-" {
            // Bounded: `< /dev/zero` or an endless pipe must not grow one line forever.
            let mut text = String::new();
            std::io::stdin()
                .lock()
                .take(STDIN_LIMIT + 1)
                .read_to_string(&mut text)
                .context("reading stdin")?;
            if text.len() as u64 > STDIN_LIMIT {
                bail!("stdin holds more than {STDIN_LIMIT} bytes of shapes");
            }
            for line in text.lines() {
                if !line.trim().is_empty() {
                    inputs.push(line.trim().to_string());
                }
            }
        } else {
            inputs.push(s.clone());
        }
    }
    let mut out = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let (ty, dims) = type_and_dims(input)?;
        let a = if doc {
            doc_default(ty, &dims)
        } else {
            tpu_default(ty, &dims, gen)?
        };
        let bytes = sizes(&a)?.array_size_bytes;
        out.push((input, a.to_string(), bytes));
    }
    if json {
        let v: Vec<_> = out
            .iter()
            .map(|(i, s, b)| serde_json::json!({"input": i, "shape": s, "array_size_bytes": b}))
            .collect();
        return print_json(&v);
    }
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for (_, s, b) in &out {
        writeln!(w, "{s}  {b} B")?;
    }
    w.flush()?;
    Ok(())
}
