//! `tpusim report MODEL.onnx` for a transformer graph: imported as an N-D graph
//! (`tpusim_graph::nd`: shape subgraphs folded, dynamic axes bound by --batch, --seq
//! and --context) and timed node by node on one TPU.

use super::args::{count, precision};
use super::report::{print_memory, print_ops, print_totals};
use crate::cmd::chip::args::ChipFile;
use crate::fmt::bytes;
use crate::util::print_json;
use anyhow::Result;
use std::path::PathBuf;
use tpusim_graph::nd::{import_onnx, Bind, NdGraph};
use tpusim_llm::tpu::graph_report;

/// What the report verb passes on.
pub struct OnnxArgs {
    /// The file.
    pub path: String,
    /// Chip.
    pub chip: String,
    /// Sequences (dynamic batch axes).
    pub batch: u64,
    /// Tokens per sequence (dynamic sequence axes), default 128.
    pub seq: Option<String>,
    /// Cached tokens (dynamic past axes), default 0.
    pub context: Option<String>,
    /// Weight precision (default bf16).
    pub dtype: Option<String>,
    /// A chip TOML.
    pub chip_file: Option<PathBuf>,
    /// Summary only.
    pub summary: bool,
    /// JSON.
    pub json: bool,
    /// A page with the pictures and the figures.
    pub html: Option<PathBuf>,
}

/// Import and time it.
pub fn run(a: &OnnxArgs, onnx: &[u8]) -> Result<()> {
    let chip = ChipFile {
        chip_file: a.chip_file.clone(),
    }
    .resolve(&a.chip)?;
    let weights = precision("--dtype", a.dtype.as_deref().unwrap_or("bf16"))?;
    let g = import_bound(a, onnx)?;
    let r = graph_report(&g, &chip, weights)?;
    super::write_pictures(
        None,
        a.html.as_deref(),
        "tpusim report",
        || Ok(tpusim_llm::svg::graph_pictures(&r)),
        &r,
    )?;
    if a.json {
        return print_json(&r);
    }
    let inputs: Vec<String> = r
        .inputs
        .iter()
        .map(|i| format!("{} {:?}", i.name, i.dims))
        .collect();
    println!(
        "{} (ONNX transformer graph, {}) on {}",
        r.model,
        inputs.join(", "),
        r.chip
    );
    print_totals(&r.totals);
    println!(
        "  parameters        {} ({} at {})",
        r.parameters,
        bytes(r.weights_bytes),
        r.weights_dtype.name()
    );
    print_memory(r.hbm_bytes_needed, r.fits_hbm);
    if !a.summary {
        print_ops(&r.ops);
    }
    Ok(())
}

/// `onnx` imported with its dynamic axes bound ([`bind`]). When --seq was left at its
/// default and the import fails, the error says so and names a sequence below the
/// default that the graph imports at: a small export's causal mask or position table is
/// often shorter than 128 (gpt2_tiny's 64 × 64 mask cannot be sliced to 128).
pub(crate) fn import_bound(a: &OnnxArgs, onnx: &[u8]) -> Result<NdGraph> {
    let bind = bind(a)?;
    let err = match import_onnx(onnx, &bind) {
        Ok(g) => return Ok(g),
        Err(e) => anyhow::Error::new(e).context(format!("'{}'", a.path)),
    };
    if a.seq.is_some() {
        return Err(err);
    }
    match longest_seq_that_imports(onnx, &bind) {
        Some(seq) => Err(anyhow::anyhow!(
            "{err:#} (--seq was not given, so the sequence axes were bound to its default, \
             {}; this graph imports with --seq {seq})",
            bind.seq
        )),
        None => Err(err),
    }
}

/// A sequence below `bind.seq` that `onnx` imports at, if any: by a binary search, the
/// longest one where imports fail from some length up (masks and position tables sliced
/// to the sequence); the length returned has imported, whatever the graph.
fn longest_seq_that_imports(onnx: &[u8], bind: &Bind) -> Option<u64> {
    let imports = |seq: u64| import_onnx(onnx, &Bind { seq, ..*bind }).is_ok();
    if !imports(1) {
        return None;
    }
    // imports at lo, not at hi
    let (mut lo, mut hi) = (1u64, bind.seq);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if imports(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// The dynamic axes bound by --batch, --seq (default 128) and --context (default 0).
pub(crate) fn bind(a: &OnnxArgs) -> Result<Bind> {
    let bind = Bind {
        batch: a.batch,
        seq: a
            .seq
            .as_deref()
            .map(|s| count("--seq", s))
            .transpose()?
            .unwrap_or(128),
        past: a
            .context
            .as_deref()
            .map(|s| count("--context", s))
            .transpose()?
            .unwrap_or(0),
    };
    if bind.batch == 0
        || bind.seq == 0
        || bind.batch > 1 << 24
        || bind.seq > 1 << 24
        || bind.past > 1 << 24
    {
        anyhow::bail!("--batch and --seq are between 1 and 2^24, --context at most 2^24");
    }
    Ok(bind)
}
