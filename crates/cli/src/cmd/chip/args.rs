//! Argument groups shared by the chip, roofline, slice and comm verbs, and their
//! resolution into library values (chip, slice, byte count).

use crate::util::{parse_bytes, parse_quantity};
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use tpusim_chip::{Chip, Slice};
use tpusim_layout::ElementType;

/// `--chip-file FILE`: a user chip in the TOML schema of `data/chips/*.toml`.
#[derive(Args, Debug, Clone)]
pub struct ChipFile {
    /// A chip description in the TOML schema of the built-in chips (see
    /// `tpusim chip show v5e --toml`); CHIP then names it. Example:
    /// `--chip-file mychip.toml`.
    #[arg(long, value_name = "FILE")]
    pub chip_file: Option<PathBuf>,
}

impl ChipFile {
    /// The chip called `name`: the user's file first (when given), then the built-ins.
    pub fn resolve(&self, name: &str) -> Result<Chip> {
        if let Some(path) = &self.chip_file {
            let text = crate::input::read_input(path, crate::input::InputKind::ChipToml)?;
            let chip = Chip::from_toml_str(&text, &path.display().to_string())?;
            if chip.answers_to(name) {
                return Ok(chip);
            }
            return tpusim_chip::lookup(name).map_err(|e| {
                anyhow!(
                    "{e}; the chip file '{}' defines '{}'",
                    path.display(),
                    chip.name
                )
            });
        }
        Ok(tpusim_chip::lookup(name)?)
    }
}

/// A chip and a slice shape, as positional arguments (`v5e 4x4`).
#[derive(Args, Debug, Clone)]
pub struct Topo {
    /// Chip name or alias (`tpusim chip list`), e.g. v5e, v5p, v6e.
    pub chip: String,
    /// Slice shape, chips per axis: `4x4`, `8x16`, `4x4x8`.
    pub shape: String,
    /// Wraparound per axis: `auto` (the chip's rule), `yes`, `no`, or one value per
    /// axis such as `no,yes`.
    #[arg(long, default_value = "auto", value_name = "auto|yes|no|LIST")]
    pub wraparound: String,
    #[command(flatten)]
    pub file: ChipFile,
}

impl Topo {
    /// Build the slice (validated against the pod, wraparound applied).
    pub fn slice(&self) -> Result<Slice> {
        let chip = self.file.resolve(&self.chip)?;
        let dims = tpusim_chip::parse_shape(&self.shape)?;
        let slice = Slice::new(&chip, &dims)?;
        let w = self.wraparound.trim().to_ascii_lowercase();
        if w == "auto" {
            return Ok(slice);
        }
        let flag = |t: &str| match t.trim() {
            "yes" | "true" | "y" | "1" => Ok(true),
            "no" | "false" | "n" | "0" => Ok(false),
            other => Err(anyhow!("--wraparound: '{other}' is not auto, yes or no")),
        };
        let flags: Vec<bool> = if w.contains(',') {
            w.split(',').map(flag).collect::<Result<_>>()?
        } else {
            vec![flag(&w)?; dims.len()]
        };
        Ok(slice.with_wraparound(&flags)?)
    }
}

/// The size of the data: `--bytes N` or `--array TYPE[DIMS]`.
#[derive(Args, Debug, Clone)]
#[group(required = true, multiple = false)]
pub struct Size {
    /// Bytes to move: `1.7e7`, `16GB`, `16GiB`. For collectives, the whole
    /// gathered/reduced array V.
    #[arg(long, value_name = "N")]
    pub bytes: Option<String>,
    /// The data as a typed array, its size computed: `bf16[8,128,8192]` (4-bit types
    /// packed two per byte).
    #[arg(long, value_name = "TYPE[DIMS]")]
    pub array: Option<String>,
}

impl Size {
    /// The byte count.
    pub fn bytes(&self) -> Result<f64> {
        match (&self.bytes, &self.array) {
            (Some(b), _) => Ok(parse_bytes(b).context("--bytes")? as f64),
            (None, Some(a)) => Ok(parse_array(a)?.2 as f64),
            (None, None) => bail!("give --bytes N or --array TYPE[DIMS]"),
        }
    }
}

/// Parse `TYPE[d0,d1,…]` (e.g. `bf16[8,128,8192]`, `int8[131072,131072]`, `f32[]`
/// for a scalar): returns the element type, the dims and the packed byte size.
pub fn parse_array(text: &str) -> Result<(ElementType, Vec<u64>, u64)> {
    let t = text.trim();
    let open = t
        .find('[')
        .ok_or_else(|| anyhow!("--array '{text}': expected TYPE[DIMS], e.g. bf16[8,128,8192]"))?;
    let inner = t[open + 1..]
        .strip_suffix(']')
        .ok_or_else(|| anyhow!("--array '{text}': missing closing ']'"))?;
    let dtype: ElementType = t[..open]
        .trim()
        .parse()
        .map_err(|e| anyhow!("--array '{text}': {e}"))?;
    let mut dims = Vec::new();
    let mut elements: u64 = 1;
    if !inner.trim().is_empty() {
        for p in inner.split(',') {
            let v = parse_quantity(p)
                .ok()
                .filter(|v| v.fract() == 0.0 && *v < 1.8e19)
                .map(|v| v as u64)
                .ok_or_else(|| {
                    anyhow!("--array '{text}': '{}' is not a whole dimension", p.trim())
                })?;
            elements = elements
                .checked_mul(v)
                .ok_or_else(|| anyhow!("--array '{text}': element count overflows 2^64"))?;
            dims.push(v);
        }
    }
    let bytes = tpusim_chip::dtype::packed_bytes(dtype, elements)?;
    Ok((dtype, dims, bytes))
}

/// Parse a positive rate or size flag value (`4.5e10`, `16GB`).
pub fn rate(flag: &str, text: &str) -> Result<f64> {
    let v = parse_quantity(text).with_context(|| flag.to_string())?;
    if v <= 0.0 {
        bail!("{flag} must be > 0, got {text}");
    }
    Ok(v)
}

/// Parse a non-negative duration in seconds (`1e-6`, `0.000001`).
pub fn seconds(flag: &str, text: &str) -> Result<f64> {
    let v: f64 = text
        .trim()
        .trim_end_matches('s')
        .parse()
        .map_err(|_| anyhow!("{flag}: '{text}' is not a number of seconds (e.g. 1e-6)"))?;
    if !v.is_finite() || v < 0.0 {
        bail!("{flag} must be a finite number of seconds >= 0, got {text}");
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays() {
        let (t, d, b) = parse_array("bf16[8,128,8192]").unwrap();
        assert_eq!(
            (t, d, b),
            (ElementType::Bf16, vec![8, 128, 8192], 16_777_216)
        );
        assert_eq!(parse_array("s4[3]").unwrap().2, 2);
        assert_eq!(parse_array("f32[]").unwrap().2, 4);
        assert!(parse_array("bf16[8,").is_err());
        assert!(parse_array("q7[8]").is_err());
        assert!(parse_array("f64[4294967296,4294967296]").is_err());
        assert!(parse_array("bf16[1.5]").is_err());
    }
}
