//! # tpusim-svg
//!
//! What every tpusim picture shares: escaping text for XML, an estimate of how wide a
//! text renders, and text cut to fit a box. Every SVG writer (chip, lmem, systolic,
//! planner, report, the layout grid) uses these, so no label leaves its picture
//! (`.ci/picture-check.sh` measures the rendered boxes in Chromium).
#![deny(missing_docs)]

/// Escape text for XML/HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// Width of one character in em, an upper bound for the sans-serif and monospace fonts
/// browsers pick (every monospace character is 0.6 em; sans-serif capitals and 'm', 'w'
/// reach 0.9).
fn char_em(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | '(' | ')' | '[' | ']'
        | ' ' => 0.6,
        'm' | 'w' | 'M' | 'W' | '@' | '%' | '…' | '—' => 0.95,
        c if c.is_ascii_uppercase() => 0.75,
        c if c.is_ascii() => 0.62,
        _ => 1.0, // CJK and symbols: a full em
    }
}

/// Estimated rendered width of `text` at `font_px`, pixels (never less than it renders
/// in the usual fonts).
pub fn text_width(text: &str, font_px: f64) -> f64 {
    text.chars().map(char_em).sum::<f64>() * font_px
}

/// `text` cut (with "…") to at most `max_px` wide at `font_px`; empty if not even "…"
/// fits.
pub fn fit(text: &str, max_px: f64, font_px: f64) -> String {
    if text_width(text, font_px) <= max_px {
        return text.to_string();
    }
    let budget = max_px - char_em('…') * font_px;
    if budget < 0.0 {
        return String::new();
    }
    let mut w = 0.0;
    let mut o = String::new();
    for c in text.chars() {
        w += char_em(c) * font_px;
        if w > budget {
            break;
        }
        o.push(c);
    }
    o.push('…');
    o
}

/// `text` broken at spaces into lines of at most `max_px` at `font_px` (a word wider
/// than the line is cut with [`fit`]).
pub fn wrap(text: &str, max_px: f64, font_px: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if text_width(&candidate, font_px) <= max_px || line.is_empty() {
            line = candidate;
        } else {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
        .into_iter()
        .map(|l| fit(&l, max_px, font_px))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
    }

    proptest! {
        #[test]
        fn fitted_text_fits_and_is_a_prefix(text in "\\PC{0,60}", max in 0.0f64..400.0, font in 6.0f64..16.0) {
            let f = fit(&text, max, font);
            prop_assert!(text_width(&f, font) <= max + 1e-9 || f.is_empty());
            let kept = f.trim_end_matches('…');
            prop_assert!(text.starts_with(kept));
            if text_width(&text, font) <= max { prop_assert_eq!(f, text); }
        }

        #[test]
        fn wrapped_lines_fit_and_keep_every_word_that_fits(text in "[a-h]{1,12}( [a-h]{1,12}){0,12}", max in 80.0f64..300.0) {
            let lines = wrap(&text, max, 10.0);
            for l in &lines { prop_assert!(text_width(l, 10.0) <= max + 1e-9); }
            prop_assert_eq!(lines.join(" ").replace('…', ""), text.clone());
        }
    }
}
