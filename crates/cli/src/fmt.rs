//! Human-readable numbers with units for every verb's tables and messages (JSON stays
//! exact): the CLI's one byte formatter ([`bytes`]), times, and figures with units.

/// Seconds as `188.4 µs`, `66.67 ms`, `1.20 s`.
pub fn time(s: f64) -> String {
    if !s.is_finite() {
        return format!("{s}");
    }
    let a = s.abs();
    if a == 0.0 {
        "0 s".into()
    } else if a < 1e-6 {
        format!("{:.2} ns", s * 1e9)
    } else if a < 1e-3 {
        format!("{:.2} µs", s * 1e6)
    } else if a < 1.0 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

/// A number in engineering notation with a unit: `1.97e14 FLOP/s`.
pub fn sci(v: f64, unit: &str) -> String {
    if v == 0.0 {
        format!("0 {unit}")
    } else if !v.is_finite() {
        format!("{v} {unit}")
    } else if (1e-2..1e4).contains(&v.abs()) {
        format!("{} {unit}", trim(format!("{v:.3}")))
    } else {
        format!("{v:.3e} {unit}")
    }
    .trim_end()
    .to_string()
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Bytes, the CLI's one way to show them: a whole number under 10,000 of a binary
/// unit as such (`256 KiB`, `16 GiB`), anything else in SI units with the exact count
/// in brackets (`16.78 MB (16777216 B)`, `32.00 GB (32000000000 B)`, not
/// `31250000 KiB`), and under a kilobyte as bytes (`320 B`).
pub fn bytes(b: f64) -> String {
    let binary = [(5, "PiB"), (4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")];
    for (power, unit) in binary {
        let m = 1024f64.powi(power);
        if b >= m && (b / m).fract() == 0.0 && b / m < 10_000.0 {
            return format!("{} {unit}", b / m);
        }
    }
    let si = [
        (1e15, "PB"),
        (1e12, "TB"),
        (1e9, "GB"),
        (1e6, "MB"),
        (1e3, "kB"),
    ];
    for (m, u) in si {
        if b >= m {
            return format!("{:.2} {u} ({b:.0} B)", b / m);
        }
    }
    format!("{b:.0} B")
}

/// An optional figure, or `-`.
pub fn opt(v: Option<f64>, unit: &str) -> String {
    v.map(|v| sci(v, unit)).unwrap_or_else(|| "-".into())
}

/// Print aligned `name  value` rows.
pub fn table(rows: &[(&str, String)]) {
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    for (k, v) in rows {
        println!("{k:<w$}  {v}");
    }
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn bytes_are_binary_when_whole_else_si_with_the_count() {
        assert_eq!(bytes(262_144.0), "256 KiB");
        assert_eq!(bytes(16.0 * 1024f64.powi(3)), "16 GiB");
        assert_eq!(bytes(1_048_576.0), "1 MiB");
        assert_eq!(bytes(320_000.0), "320.00 kB (320000 B)");
        assert_eq!(bytes(1_536.0), "1.54 kB (1536 B)");
        assert_eq!(bytes(16_777_217.0), "16.78 MB (16777217 B)");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(0.0), "0 B");
        // a whole number of KiB too long to read is given in SI units
        assert_eq!(bytes(32e9), "32.00 GB (32000000000 B)");
        assert_eq!(bytes(9_999.0 * 1024.0), "9999 KiB");
    }
}
