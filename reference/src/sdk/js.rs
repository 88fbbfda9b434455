//! The JavaScript semantics the SDK text depends on: `\s` and `trim`, `JSON.stringify` of strings and
//! numbers, `Number.prototype.toString`, `BigInt` digits, and UTF-16 string order and length. Number
//! formatting and array-index keys (for `Object.entries` order, applied in `subset`) are
//! `crate::value`'s, shared with the registry's messages.
//!
//! Spec: SDK-006 (UTF-16 order), SDK-008 (JSON-quoted keys), SDK-025 (number text).

use std::cmp::Ordering;
use std::fmt::Write as _;

/// ECMAScript `WhiteSpace` plus `LineTerminator`: what `\s` matches and `trim` removes.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{D}'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// `s.replace(/\s+/g, ' ').trim()`: the words of `s` joined by single spaces.
pub(crate) fn push_collapsed(out: &mut String, s: &str) {
    let mut first = true;
    for word in s.split(is_js_whitespace).filter(|w| !w.is_empty()) {
        if !first {
            out.push(' ');
        }
        first = false;
        out.push_str(word);
    }
}

/// `JSON.stringify` of a string (well-formed input: Rust strings carry no lone surrogates).
pub(crate) fn push_json_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut plain = 0;
    for (index, byte) in s.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0C => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1F => "",
            _ => continue,
        };
        out.push_str(&s[plain..index]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{:04x}", byte);
        } else {
            out.push_str(escape);
        }
        plain = index + 1;
    }
    out.push_str(&s[plain..]);
    out.push('"');
}

pub(crate) use crate::value::{array_index, js_f64 as js_number, push_js_number};

/// Lossless JSON number as the upstream schema subset defines it: finite and not negative zero.
pub(crate) fn is_lossless_number(x: f64) -> bool {
    x.is_finite() && !(x == 0.0 && x.is_sign_negative())
}

/// `Number.isInteger`.
pub(crate) fn is_integer(x: f64) -> bool {
    x.is_finite() && x.trunc() == x
}

/// `BigInt(x).toString()` for an integral finite double: every digit of its exact value.
pub(crate) fn push_exact_integer(out: &mut String, x: f64) {
    if x < 0.0 {
        out.push('-');
    }
    let magnitude = x.abs();
    if magnitude < 18_446_744_073_709_551_616.0 {
        let _ = write!(out, "{}", magnitude as u64);
        return;
    }
    let bits = magnitude.to_bits();
    let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let shift = ((bits >> 52) & 0x7FF) as u32 - 1075;
    // Little-endian base-2^32 limbs of mantissa << shift.
    let limb_shift = (shift / 32) as usize;
    let bit_shift = shift % 32;
    let mut limbs = vec![0u32; limb_shift + 4];
    let wide = (mantissa as u128) << bit_shift;
    for (i, limb) in limbs[limb_shift..].iter_mut().enumerate() {
        *limb = (wide >> (32 * i)) as u32;
    }
    let mut chunks: Vec<u32> = Vec::new();
    while limbs.iter().any(|&l| l != 0) {
        let mut remainder: u64 = 0;
        for limb in limbs.iter_mut().rev() {
            let current = (remainder << 32) | u64::from(*limb);
            *limb = (current / 1_000_000_000) as u32;
            remainder = current % 1_000_000_000;
        }
        chunks.push(remainder as u32);
    }
    let mut iter = chunks.iter().rev();
    if let Some(first) = iter.next() {
        let _ = write!(out, "{first}");
    }
    for chunk in iter {
        let _ = write!(out, "{chunk:09}");
    }
}

/// `a < b` / `a > b` on JavaScript strings: UTF-16 code unit order.
pub(crate) fn cmp_utf16(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(x: f64) -> String {
        let mut s = String::new();
        push_js_number(&mut s, x);
        s
    }

    #[test]
    fn number_to_string_matches_ecmascript() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(-5.0), "-5");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(0.1), "0.1");
        assert_eq!(num(1e21), "1e+21");
        assert_eq!(num(1e20), "100000000000000000000");
        assert_eq!(num(1.5e-7), "1.5e-7");
        assert_eq!(num(0.000001), "0.000001");
        assert_eq!(num(123456.789), "123456.789");
        assert_eq!(num(2f64.powi(60)), "1152921504606847000");
        assert_eq!(num(1.7976931348623157e308), "1.7976931348623157e+308");
        assert_eq!(num(5e-324), "5e-324");
    }

    #[test]
    fn bigint_digits_are_exact() {
        let mut s = String::new();
        push_exact_integer(&mut s, 2f64.powi(60));
        assert_eq!(s, "1152921504606846976");
        s.clear();
        push_exact_integer(&mut s, 1e21);
        assert_eq!(s, "1000000000000000000000");
        s.clear();
        push_exact_integer(&mut s, -1e23);
        assert_eq!(s, "-99999999999999991611392");
        s.clear();
        push_exact_integer(&mut s, 2f64.powi(70));
        assert_eq!(s, "1180591620717411303424");
    }

    #[test]
    fn utf16_order() {
        assert_eq!(cmp_utf16("\u{FF01}", "\u{1F600}"), Ordering::Greater);
        assert_eq!(cmp_utf16("a", "b"), Ordering::Less);
    }
}
