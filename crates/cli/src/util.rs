//! Helpers every subcommand shares: exit-code classification, size/rate parsing,
//! atomic file output and JSON printing. Only the `cli` crate talks to the user.

use anyhow::{anyhow, Context, Result};
use std::io::Write;
use std::path::Path;

/// Marks an error as an internal failure (exit code 1) rather than bad input (exit
/// code 2, the default for every other error).
#[derive(Debug)]
pub struct Internal(pub String);

impl std::fmt::Display for Internal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Internal {}

/// The process exit code for an error: 1 when any cause is [`Internal`], else 2.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.downcast_ref::<Internal>().is_some()) {
        1
    } else {
        2
    }
}

/// Parse a byte size or rate as users write it: `1.7e7`, `4.5e10`, `16GiB`, `16GB`,
/// `512KiB`, `1_000_000`, `2 MB`. SI suffixes (kB, MB, GB, TB, PB) are powers of 1000,
/// binary ones (KiB, MiB, GiB, TiB, PiB) powers of 1024; a trailing `B`, `B/s` or `/s`
/// is allowed. Returns the value as f64 (rates and large sizes need not be integers).
pub fn parse_quantity(text: &str) -> Result<f64> {
    let t: String = text
        .trim()
        .chars()
        .filter(|c| *c != '_' && *c != ' ')
        .collect();
    let t = t.strip_suffix("/s").unwrap_or(&t);
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        anyhow!("'{text}' is not a number or size (examples: 1.7e7, 16GiB, 4.5e10)")
    })?;
    let mult = match unit {
        "" | "B" => 1.0,
        "k" | "kB" | "KB" | "K" => 1e3,
        "M" | "MB" => 1e6,
        "G" | "GB" => 1e9,
        "T" | "TB" => 1e12,
        "P" | "PB" => 1e15,
        "KiB" | "Ki" => 1024.0,
        "MiB" | "Mi" => 1024.0f64.powi(2),
        "GiB" | "Gi" => 1024.0f64.powi(3),
        "TiB" | "Ti" => 1024.0f64.powi(4),
        "PiB" | "Pi" => 1024.0f64.powi(5),
        _ => {
            return Err(anyhow!(
                "'{text}': unknown unit '{unit}' (use B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    let v = value * mult;
    if !v.is_finite() || v < 0.0 {
        return Err(anyhow!("'{text}' must be a finite, non-negative quantity"));
    }
    Ok(v)
}

/// Parse a whole byte count (see [`parse_quantity`]); refuses fractions and values
/// beyond u64.
pub fn parse_bytes(text: &str) -> Result<u64> {
    let v = parse_quantity(text)?;
    if v.fract() != 0.0 || v >= 18_446_744_073_709_551_616.0 {
        return Err(anyhow!(
            "'{text}' must be a whole number of bytes below 2^64"
        ));
    }
    Ok(v as u64)
}

/// Write `bytes` to `path` atomically: a temporary file in the same folder, then a
/// rename, so a failed run never leaves a partial file behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes).map_err(Into::into))
}

/// Like [`write_atomic`], with a callback that streams into the temporary file.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut std::io::BufWriter<&mut std::fs::File>) -> Result<()>,
) -> Result<()> {
    let mut tmp = temp_file_beside(path)?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        fill(&mut w)?;
        w.flush()
            .with_context(|| format!("cannot write '{}'", path.display()))?;
    }
    tmp.persist(path)
        .map_err(|e| anyhow!("cannot write '{}': {}", path.display(), e.error))?;
    Ok(())
}

/// A temporary file in the folder of `path`, to be renamed onto `path` once complete.
/// Created readable by others (mode 0644 on Unix, like a file the shell would write)
/// rather than tempfile's private 0600, since it becomes the user's output file.
pub fn temp_file_beside(path: &Path) -> Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tpusim-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    builder
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a file in '{}'", dir.display()))
}

/// Print one JSON document (pretty, newline-terminated) on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| Internal(e.to_string()))?;
    println!("{text}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(parse_quantity("1.7e7").unwrap(), 1.7e7);
        assert_eq!(parse_quantity("16GiB").unwrap(), 16.0 * 1024f64.powi(3));
        assert_eq!(parse_quantity("16GB").unwrap(), 16e9);
        assert_eq!(parse_quantity("4.5e10 B/s").unwrap(), 4.5e10);
        assert_eq!(parse_quantity("1_000").unwrap(), 1000.0);
        assert!(parse_quantity("12XB").is_err());
        assert!(parse_quantity("-1").is_err());
        assert!(parse_quantity("abc").is_err());
        assert_eq!(parse_bytes("2KiB").unwrap(), 2048);
        assert!(parse_bytes("1.5").is_err());
    }
}
