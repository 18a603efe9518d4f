//! Python's `repr(float)` (shortest round-trip digits, scientific below 1e-4 and from
//! 1e16), so reports match SCALE-Sim's text byte for byte.

/// Format `x` as Python 3 prints a float.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // shortest round-trip digits and decimal exponent; where two shortest strings are
    // equally near (an exact tie), Python keeps the round-half-even one and Rust's `{:e}`
    // may not: take the correctly rounded string of that length when it round-trips
    let split = |e: &str| -> (String, i32) {
        let (mant, exp) = e.split_once('e').unwrap_or((e, "0"));
        (
            mant.chars().filter(|c| c.is_ascii_digit()).collect(),
            exp.parse().unwrap_or(0),
        )
    };
    let (mut digits, mut exp) = split(&format!("{:e}", x.abs()));
    if digits.len() > 1 {
        let even = format!("{:.*e}", digits.len() - 1, x.abs());
        if even.parse::<f64>() == Ok(x.abs()) {
            (digits, exp) = split(&even);
        }
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let nd = digits.len() as i32;
    if (-4..16).contains(&exp) {
        let s = if exp >= 0 {
            if nd > exp + 1 {
                format!(
                    "{}.{}",
                    &digits[..(exp + 1) as usize],
                    &digits[(exp + 1) as usize..]
                )
            } else {
                format!("{}{}.0", digits, "0".repeat((exp + 1 - nd) as usize))
            }
        } else {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        };
        format!("{sign}{s}")
    } else {
        let m = if nd > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits.clone()
        };
        let es = if exp < 0 {
            format!("-{:02}", -exp)
        } else {
            format!("+{:02}", exp)
        };
        format!("{sign}{m}e{es}")
    }
}

/// A whole number printed as a numpy float64 (`9.0`, `-66.0`).
pub fn py_float_int(x: i64) -> String {
    py_float(x as f64)
}

#[cfg(test)]
mod tests {
    use super::py_float;
    #[test]
    fn python_repr() {
        assert_eq!(py_float(38.142398286937905), "38.142398286937905");
        assert_eq!(py_float(100.0), "100.0");
        assert_eq!(py_float(8.0), "8.0");
        assert_eq!(py_float(-66.0), "-66.0");
        assert_eq!(py_float(0.0001), "0.0001");
        assert_eq!(py_float(0.00001), "1e-05");
        assert_eq!(py_float(1.5e-7), "1.5e-07");
        assert_eq!(py_float(1e16), "1e+16");
        assert_eq!(py_float(123456789012345.6), "123456789012345.6");
        assert_eq!(py_float(0.5), "0.5");
        assert_eq!(py_float(3.6616702355460387), "3.6616702355460387");
        // an exact tie at 17 digits: Python rounds half to even (SCALE-Sim's Overall
        // Util for 143×139×1 on 16×32 ws, 1024 cycles)
        assert_eq!(py_float(1987700.0 / 524288.0), "3.7912368774414062");
        assert_eq!(py_float(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(py_float(1e22), "1e+22");
        assert_eq!(py_float(1e23), "1e+23");
        assert_eq!(py_float(2.5e-5), "2.5e-05");
    }
}
