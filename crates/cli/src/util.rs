//! Helpers every subcommand shares: exit-code classification, size/rate parsing,
//! atomic file output and JSON printing. Only the `cli` crate talks to the user.

use anyhow::{anyhow, bail, Result};

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
    // as a context layer (anyhow's own downcast finds it) or as a cause in the chain
    if e.downcast_ref::<Internal>().is_some()
        || e.chain().any(|c| c.downcast_ref::<Internal>().is_some())
    {
        1
    } else {
        2
    }
}

/// Parse `--resolution` as every verb takes it: `H,W`, `HxW` or one number for both
/// (`224,224`, `224x224`, `224`), each a positive whole number of pixels; `None` when
/// it was not given.
pub fn parse_resolution(text: Option<&str>) -> Result<Option<(u64, u64)>> {
    let Some(t) = text else { return Ok(None) };
    let parts: Vec<&str> = t.split([',', 'x', 'X']).map(str::trim).collect();
    let num = |s: &str| -> Result<u64> {
        s.parse::<u64>().ok().filter(|&v| v > 0).ok_or_else(|| {
            anyhow!("--resolution '{t}': '{s}' is not a positive whole number of pixels (expected H,W such as 224,224)")
        })
    };
    match parts.as_slice() {
        [a] => {
            let v = num(a)?;
            Ok(Some((v, v)))
        }
        [a, b] => Ok(Some((num(a)?, num(b)?))),
        _ => bail!("--resolution '{t}' must be H,W, HxW or one number (for example 224,224)"),
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

pub use crate::output::write_atomic;

/// Bytes a memory-hungry computation may use: three quarters of the memory the machine
/// has available (`MemAvailable`), or of the process's address-space limit when that is
/// smaller (`ulimit -v`); 4 GiB when neither can be read.
pub fn memory_budget() -> u64 {
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb.saturating_mul(1024))
    });
    let limit = address_space_limit();
    let known = [available, limit].into_iter().flatten().min();
    known.map_or(4 << 30, |b| b / 4 * 3)
}

/// The soft RLIMIT_AS, when one is set.
fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct we own.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    // rlim_t is u64 here but may be narrower elsewhere
    #[allow(clippy::unnecessary_cast)]
    let cur = r.rlim_cur as u64;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(cur)
}

/// Longest run of non-space characters shown whole in a message; longer ones (a pasted
/// file, a 100 kB argument) are cut in the middle.
const MAX_SHOWN_WORD: usize = 160;
/// Longest message shown whole.
const MAX_SHOWN_CHARS: usize = 4096;

/// Text from input files or arguments made safe to print on a terminal line: control
/// characters (newlines, escape sequences) and bidirectional overrides appear escaped
/// (`\n`, `\x1b`, `\u{202e}`), over-long words and messages are cut in the middle
/// with a count of what was left out. Every error, note and warning goes through this.
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_SHOWN_CHARS + 64));
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > MAX_SHOWN_WORD {
            let (head, tail) = (MAX_SHOWN_WORD * 2 / 3, MAX_SHOWN_WORD / 4);
            push_escaped(&mut out, chars[..head].iter().copied());
            let cut = chars.len() - head - tail;
            out.push_str(&format!("…[{cut} chars cut]…"));
            push_escaped(&mut out, chars[chars.len() - tail..].iter().copied());
        } else {
            push_escaped(&mut out, chars.into_iter());
        }
    }
    let n = out.chars().count();
    if n > MAX_SHOWN_CHARS {
        let head: String = out.chars().take(MAX_SHOWN_CHARS).collect();
        return format!("{head}…[{} chars cut]", n - MAX_SHOWN_CHARS);
    }
    out
}

/// [`shown`] applied line by line to a table or report (line breaks kept).
pub fn shown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.push_str(&shown(body));
        out.push_str(end);
    }
    out
}

fn push_escaped(out: &mut String, chars: impl Iterator<Item = char>) {
    for c in chars {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() || is_bidi_control(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
}

/// Unicode's bidirectional formatting characters, which reorder what a terminal shows.
fn is_bidi_control(c: char) -> bool {
    matches!(c as u32, 0x200e | 0x200f | 0x202a..=0x202e | 0x2066..=0x2069)
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

    #[test]
    fn shown_escapes_controls_and_cuts_long_words() {
        assert_eq!(shown("a\nerror: all good"), "a\\nerror: all good");
        assert_eq!(
            shown("\x1b[2J\x1b]0;title\x07"),
            "\\x1b[2J\\x1b]0;title\\x07"
        );
        assert_eq!(shown("x\u{202e}y\u{85}"), "x\\u{202e}y\\u{85}");
        assert_eq!(shown("plain 'name' ünïcode"), "plain 'name' ünïcode");
        let long = "z".repeat(120_000);
        let s = shown(&format!("bad '{long}' value"));
        assert!(s.len() < 400, "{}", s.len());
        assert!(s.contains("chars cut") && s.ends_with("' value"), "{s}");
        assert_eq!(shown_text("a\x1bb\nc\n"), "a\\x1bb\nc\n");
        let many = "word ".repeat(5000);
        assert!(shown(&many).chars().count() < 4200);
    }
}
