//! JSON for the fd-3 wire, as JavaScript numbers see it: a strict, iterative RFC 8259 reader for child
//! frames (no recursion, so a 100,000-deep forgery cannot overflow the host stack) that reads every number
//! from its raw token — the workspace's serde_json has no `arbitrary_precision`, so a token a double cannot
//! hold exactly (`9007199254740993`, `-0`, `1e400`) is caught here instead of being rounded silently
//! (upstream `hasUnsafeIntegerToken`, `hasNonLosslessNumber`) — and an iterative writer for host values.
//!
//! Spec: RUN-007, RUN-023 (lossless JSON crossing both ways).

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use crate::code::ledger::plain_run;

/// 2^53: every integer of at most this magnitude is exact as a JavaScript number.
pub(super) const EXACT_LIMIT: f64 = 9_007_199_254_740_992.0;

/// Parse one document; the root object's members that hold a lossy scalar are listed beside it.
pub(super) fn parse(text: &str) -> Result<Parsed, String> {
    Reader::new(text).document()
}

/// A parsed document: its value and the root object's members that hold a lossy scalar.
pub(super) struct Parsed {
    pub value: Value,
    pub lossy_members: Vec<String>,
}

/// A container under construction.
enum Open {
    Array(Vec<Value>),
    Object(Map<String, Value>, Option<String>),
}

/// A strict, iterative RFC 8259 reader producing JS-faithful numbers.
struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, bytes: text.as_bytes(), pos: 0 }
    }

    fn error(&self, what: &str) -> String {
        format!("invalid JSON at byte {}: {what}", self.pos)
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn document(mut self) -> Result<Parsed, String> {
        let mut stack: Vec<Open> = Vec::new();
        let mut lossy_members: Vec<String> = Vec::new();
        let root = match self.root(&mut stack, &mut lossy_members) {
            Ok(root) => root,
            Err(e) => {
                dismantle_stack(&mut stack);
                return Err(e);
            }
        };
        self.skip_ws();
        if self.pos != self.bytes.len() {
            crate::value::dismantle(root);
            return Err(self.error("trailing characters"));
        }
        Ok(Parsed { value: root, lossy_members })
    }

    /// The document's value; on an error the caller dismantles `stack`.
    fn root(&mut self, stack: &mut Vec<Open>, lossy_members: &mut Vec<String>) -> Result<Value, String> {
        Ok(loop {
            self.skip_ws();
            // Expect a value (or a closing bracket right after an opening one).
            let mut value = match self.bytes.get(self.pos) {
                Some(b'{') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.bytes.get(self.pos) == Some(&b'}') {
                        self.pos += 1;
                        Value::Object(Map::new())
                    } else {
                        let key = self.key()?;
                        stack.push(Open::Object(Map::new(), Some(key)));
                        continue;
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.bytes.get(self.pos) == Some(&b']') {
                        self.pos += 1;
                        Value::Array(Vec::new())
                    } else {
                        stack.push(Open::Array(Vec::new()));
                        continue;
                    }
                }
                Some(b'"') => {
                    let (s, lossy) = self.string()?;
                    if lossy {
                        note_lossy(stack, lossy_members);
                    }
                    Value::String(s)
                }
                Some(b't') => self.literal("true", Value::Bool(true))?,
                Some(b'f') => self.literal("false", Value::Bool(false))?,
                Some(b'n') => self.literal("null", Value::Null)?,
                Some(b'-' | b'0'..=b'9') => match self.number()? {
                    Some(n) => Value::Number(n),
                    None => {
                        note_lossy(stack, lossy_members);
                        Value::Null
                    }
                },
                Some(_) => return Err(self.error("unexpected character")),
                None => return Err(self.error("unexpected end")),
            };
            // Attach the finished value, closing every container it completes.
            let finished = loop {
                let Some(top) = stack.last_mut() else { break Some(value) };
                match top {
                    Open::Array(items) => items.push(value),
                    Open::Object(map, key) => {
                        let key = key.take().unwrap_or_default();
                        map.insert(key, value);
                    }
                }
                self.skip_ws();
                match (self.bytes.get(self.pos), stack.last_mut()) {
                    (Some(b','), Some(Open::Array(_))) => {
                        self.pos += 1;
                        break None;
                    }
                    (Some(b','), Some(Open::Object(_, key))) => {
                        self.pos += 1;
                        self.skip_ws();
                        *key = Some(self.key()?);
                        break None;
                    }
                    (Some(b']'), Some(Open::Array(_))) | (Some(b'}'), Some(Open::Object(..))) => {
                        self.pos += 1;
                        value = match stack.pop() {
                            Some(Open::Array(items)) => Value::Array(items),
                            Some(Open::Object(map, _)) => Value::Object(map),
                            None => Value::Null,
                        };
                    }
                    _ => return Err(self.error("expected `,` or a closing bracket")),
                }
            };
            if let Some(root) = finished {
                break root;
            }
        })
    }

    /// An object key and its `:`.
    fn key(&mut self) -> Result<String, String> {
        if self.bytes.get(self.pos) != Some(&b'"') {
            return Err(self.error("expected an object key"));
        }
        let (key, _) = self.string()?;
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b':') {
            return Err(self.error("expected `:`"));
        }
        self.pos += 1;
        Ok(key)
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("invalid literal"))
        }
    }

    /// A string; `true` when it held a lone surrogate escape (replaced by U+FFFD).
    fn string(&mut self) -> Result<(String, bool), String> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        let mut lossy = false;
        loop {
            let start = self.pos;
            self.pos += plain_run(self.bytes.get(start..).unwrap_or_default());
            out.push_str(&self.text[start..self.pos]);
            match self.bytes.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok((out, lossy));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let Some(&esc) = self.bytes.get(self.pos) else { return Err(self.error("unterminated escape")) };
                    self.pos += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let unit = self.hex4()?;
                            if (0xD800..0xDC00).contains(&unit)
                                && self.bytes.get(self.pos) == Some(&b'\\')
                                && self.bytes.get(self.pos + 1) == Some(&b'u')
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let low = self.hex4()?;
                                if (0xDC00..0xE000).contains(&low) {
                                    let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                                    out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                                    continue;
                                }
                                self.pos = save;
                            }
                            match char::from_u32(unit) {
                                Some(c) => out.push(c),
                                None => {
                                    out.push('\u{FFFD}');
                                    lossy = true;
                                }
                            }
                        }
                        _ => return Err(self.error("invalid escape")),
                    }
                }
                Some(_) => return Err(self.error("control character in string")),
                None => return Err(self.error("unterminated string")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.text.get(self.pos..self.pos + 4).ok_or_else(|| self.error("short \\u escape"))?;
        let unit = u32::from_str_radix(digits, 16).map_err(|_| self.error("invalid \\u escape"))?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.error("invalid \\u escape"));
        }
        self.pos += 4;
        Ok(unit)
    }

    /// A number token; `None` when it is not lossless (see [`lossless_number`]).
    fn number(&mut self) -> Result<Option<Number>, String> {
        let start = self.pos;
        let b = self.bytes;
        if b.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        match b.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = b.get(self.pos) {
                    self.pos += 1;
                }
            }
            _ => return Err(self.error("invalid number")),
        }
        let mut integral = true;
        if b.get(self.pos) == Some(&b'.') {
            integral = false;
            self.pos += 1;
            if !matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number"));
            }
            while let Some(b'0'..=b'9') = b.get(self.pos) {
                self.pos += 1;
            }
        }
        if let Some(b'e' | b'E') = b.get(self.pos) {
            integral = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = b.get(self.pos) {
                self.pos += 1;
            }
            if !matches!(b.get(self.pos), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number"));
            }
            while let Some(b'0'..=b'9') = b.get(self.pos) {
                self.pos += 1;
            }
        }
        Ok(lossless_number(&self.text[start..self.pos], integral))
    }
}

/// Drop partially built containers without recursion.
fn dismantle_stack(stack: &mut Vec<Open>) {
    for open in stack.drain(..) {
        match open {
            Open::Array(items) => crate::value::dismantle(Value::Array(items)),
            Open::Object(map, _) => crate::value::dismantle(Value::Object(map)),
        }
    }
}

/// Record that the root object's member being parsed holds a lossy scalar.
fn note_lossy(stack: &[Open], lossy: &mut Vec<String>) {
    if let Some(Open::Object(_, Some(key))) = stack.first() {
        if !lossy.iter().any(|k| k == key) {
            lossy.push(key.clone());
        }
    } else if let Some(Open::Object(map, None)) = stack.first() {
        // Unreachable: a pending value always has its key set. Keep a conservative marker.
        let _ = map;
        lossy.push(String::new());
    }
}

/// The number a JSON token denotes as JavaScript would hold it, or `None` when holding it would change it:
/// negative zero, a non-finite value, or an integer token a double cannot represent exactly (upstream's
/// `hasUnsafeIntegerToken`). Integral values of magnitude at most 2^53 become integer numbers.
pub(super) fn lossless_number(token: &str, integral_token: bool) -> Option<Number> {
    if integral_token {
        if token == "-0" {
            return None;
        }
        if let Ok(n) = token.parse::<i64>() {
            return ((n as f64) as i128 == i128::from(n)).then(|| Number::from(n));
        }
        if let Ok(n) = token.parse::<u64>() {
            return ((n as f64) as u128 == u128::from(n)).then(|| Number::from(n));
        }
        let f: f64 = token.parse().ok()?;
        if !f.is_finite() {
            return None;
        }
        let digits = token.trim_start_matches('-');
        return (exact_integer_digits(f.abs()) == digits).then(|| Number::from_f64(f)).flatten();
    }
    let f: f64 = token.parse().ok()?;
    if !f.is_finite() || (f == 0.0 && f.is_sign_negative()) {
        return None;
    }
    if f.fract() == 0.0 && f.abs() <= EXACT_LIMIT {
        return Some(Number::from(f as i64));
    }
    Number::from_f64(f)
}

/// The exact decimal digits of a finite, integral, non-negative double.
fn exact_integer_digits(f: f64) -> String {
    let bits = f.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let mut mantissa = bits & ((1 << 52) - 1);
    if exponent != 0 {
        mantissa |= 1 << 52;
    }
    let mut shift = exponent - 1075;
    if shift <= 0 {
        // Integral, so the dropped bits are zero.
        return (mantissa >> (-shift).min(63)).to_string();
    }
    // Little-endian base-1e9 limbs.
    let mut limbs: Vec<u64> = vec![mantissa % 1_000_000_000, mantissa / 1_000_000_000];
    while shift > 0 {
        let step = shift.min(29);
        shift -= step;
        let mut carry = 0u64;
        for limb in &mut limbs {
            let v = (*limb << step) + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    while limbs.len() > 1 && limbs.last() == Some(&0) {
        limbs.pop();
    }
    let mut out = String::new();
    let mut iter = limbs.iter().rev();
    if let Some(first) = iter.next() {
        let _ = write!(out, "{first}");
    }
    for limb in iter {
        let _ = write!(out, "{limb:09}");
    }
    out
}

/// A JSON string literal.
pub(super) fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// Compact JSON of a lossless value, without recursion. Integral numbers of magnitude at most 2^53 are
/// written as integers (Python `int`), other doubles in their shortest round-trip form (Python `float`).
pub(super) fn encode_value(out: &mut String, root: &Value) -> Option<()> {
    enum Task<'v> {
        Value(&'v Value),
        Text(&'static str),
        Key(&'v str),
    }
    let mut tasks = vec![Task::Value(root)];
    while let Some(task) = tasks.pop() {
        match task {
            Task::Text(t) => out.push_str(t),
            Task::Key(k) => {
                out.push_str(&json_string(k));
                out.push(':');
            }
            Task::Value(v) => match v {
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::String(s) => out.push_str(&json_string(s)),
                Value::Number(n) => push_number(out, n)?,
                Value::Array(items) => {
                    out.push('[');
                    tasks.push(Task::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        tasks.push(Task::Value(item));
                        if i > 0 {
                            tasks.push(Task::Text(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    tasks.push(Task::Text("}"));
                    let entries: Vec<_> = map.iter().collect();
                    for (i, (k, item)) in entries.into_iter().enumerate().rev() {
                        tasks.push(Task::Value(item));
                        tasks.push(Task::Key(k));
                        if i > 0 {
                            tasks.push(Task::Text(","));
                        }
                    }
                }
            },
        }
    }
    Some(())
}

fn push_number(out: &mut String, n: &Number) -> Option<()> {
    if let Some(i) = n.as_i64() {
        if (i as f64) as i128 != i128::from(i) {
            return None;
        }
        let _ = write!(out, "{i}");
        return Some(());
    }
    if let Some(u) = n.as_u64() {
        if (u as f64) as u128 != u128::from(u) {
            return None;
        }
        let _ = write!(out, "{u}");
        return Some(());
    }
    let f = n.as_f64()?;
    if !f.is_finite() || (f == 0.0 && f.is_sign_negative()) {
        return None;
    }
    if f.fract() == 0.0 && f.abs() <= EXACT_LIMIT {
        let _ = write!(out, "{}", f as i64);
    } else {
        out.push_str(ryu::Buffer::new().format_finite(f));
    }
    Some(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_from_their_tokens() {
        assert_eq!(lossless_number("9007199254740993", true), None);
        assert_eq!(lossless_number("9007199254740992", true), Some(Number::from(9_007_199_254_740_992u64)));
        assert_eq!(lossless_number("1152921504606846976", true), Some(Number::from(1u64 << 60)));
        assert_eq!(lossless_number("18446744073709551615", true), None);
        assert!(lossless_number("18446744073709551616", true).is_some());
        assert!(lossless_number("1180591620717411303424", true).is_some());
        assert_eq!(lossless_number("1180591620717411303425", true), None);
        assert_eq!(lossless_number("-0", true), None);
        assert_eq!(lossless_number("-0.0", false), None);
        assert_eq!(lossless_number("1e400", false), None);
        assert_eq!(lossless_number("1.0", false), Some(Number::from(1)));
        assert_eq!(lossless_number("1e+15", false), Some(Number::from(1_000_000_000_000_000i64)));
        assert_eq!(lossless_number("1e+16", false), Number::from_f64(1e16));
        assert_eq!(lossless_number("0.5", false), Number::from_f64(0.5));
        assert_eq!(exact_integer_digits(2f64.powi(70)), "1180591620717411303424");
        assert_eq!(exact_integer_digits(1e300), format!("{:.0}", 1e300));
    }

    #[test]
    fn values_encode_for_python() {
        let mut out = String::new();
        encode_value(&mut out, &serde_json::json!({"a": [1.0, 0.5, 1e300, "x\n"], "b": null})).unwrap();
        assert_eq!(out, r#"{"a":[1,0.5,1e300,"x\n"],"b":null}"#);
        assert!(encode_value(&mut String::new(), &serde_json::json!(9_007_199_254_740_993u64)).is_none());
        assert!(encode_value(&mut String::new(), &serde_json::json!(-0.0)).is_none());
    }
}
