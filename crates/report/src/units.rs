//! Human-readable numbers for the terminal and HTML renderers: seconds, bytes, FLOPs and
//! rates with SI prefixes, three significant digits.

/// Seconds with a unit that keeps 1–999 before the point: `1.23 ms`, `45.6 µs`.
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        return format!("{s}");
    }
    let a = s.abs();
    let (v, unit) = if a == 0.0 {
        (0.0, "s")
    } else if a < 1e-6 {
        (s * 1e9, "ns")
    } else if a < 1e-3 {
        (s * 1e6, "µs")
    } else if a < 1.0 {
        (s * 1e3, "ms")
    } else {
        (s, "s")
    };
    format!("{} {unit}", sig3(v))
}

/// A count with an SI prefix and a unit suffix: `si(2.5e9, "FLOP")` → `2.50 GFLOP`.
pub fn si(x: f64, unit: &str) -> String {
    if !x.is_finite() {
        return format!("{x} {unit}");
    }
    let prefixes = [
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
    ];
    for (scale, p) in prefixes {
        if x.abs() >= scale {
            return format!("{} {p}{unit}", sig3(x / scale));
        }
    }
    format!("{} {unit}", sig3(x))
}

/// Bytes with an SI prefix: `1.20 MB`.
pub fn bytes(b: u64) -> String {
    if b < 1000 {
        return format!("{b} B");
    }
    si(b as f64, "B")
}

/// Three significant digits, no exponent for ordinary magnitudes.
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A ratio as a percentage with one decimal: `42.0%`.
pub fn percent(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{:.1}%", ratio * 100.0)
    } else {
        "-".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(seconds(0.00123), "1.23 ms");
        assert_eq!(seconds(4.56e-5), "45.6 µs");
        assert_eq!(seconds(2.0), "2.00 s");
        assert_eq!(seconds(3e-9), "3.00 ns");
        assert_eq!(seconds(0.0), "0 s");
        assert_eq!(si(2.5e9, "FLOP"), "2.50 GFLOP");
        assert_eq!(si(1.97e14, "FLOP/s"), "197 TFLOP/s");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1_200_000), "1.20 MB");
        assert_eq!(percent(0.42), "42.0%");
    }
}
