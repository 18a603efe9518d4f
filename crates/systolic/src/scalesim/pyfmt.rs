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
    // shortest round-trip digits and decimal exponent
    let e = format!("{:e}", x.abs());
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
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
    }
}
