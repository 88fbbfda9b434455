//! Stack-safe handling of arbitrarily deep JSON: parse without a depth limit, write and drop iteratively.
//!
//! `serde_json::Value`'s own `Drop`, `Clone`, `Display` and `PartialEq` recurse; a value 100,000 levels deep
//! overflows an ordinary thread stack in any of them. Everything here uses explicit work stacks instead.

use std::io::{self, Write};

use serde::Deserialize;
use serde_json::Value;

/// Parses one JSON text with no depth limit (`serde_stacker` grows the stack as the parse descends).
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = Value::deserialize(serde_stacker::Deserializer::new(&mut de))?;
    de.end()?;
    Ok(value)
}

/// Drops a value of any depth without recursing: containers are emptied onto a work stack first.
pub fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(mut v) = stack.pop() {
        match &mut v {
            Value::Array(items) => stack.append(items),
            Value::Object(map) => {
                let map = std::mem::take(map);
                stack.extend(map.into_iter().map(|(_, v)| v));
            }
            _ => {}
        }
    }
}

/// Writes compact JSON (byte-identical to `serde_json::to_writer`) iteratively. `Ok(false)` when the JSON
/// is longer than `limit` bytes: only its first `limit` bytes are written (cut mid-value).
pub fn write_compact(out: &mut impl Write, value: &Value, limit: usize) -> io::Result<bool> {
    write(out, value, limit, false)
}

/// `JSON.stringify` of a value of any depth: compact JSON with numbers as JavaScript prints them
/// (`2`, `1e+21`), what a fixture's `render: json` or `render: text` shows the model.
pub fn to_js_line(value: &Value) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = write(&mut out, value, usize::MAX, true);
    String::from_utf8_lossy(&out).into_owned()
}

fn write(out: &mut impl Write, value: &Value, limit: usize, js_numbers: bool) -> io::Result<bool> {
    enum Frame<'a> {
        Value(&'a Value),
        Raw(&'static [u8]),
        Key(&'a str),
    }
    let mut counter = Counting { inner: out, written: 0, limit };
    let mut stack = vec![Frame::Value(value)];
    while let Some(frame) = stack.pop() {
        if counter.written >= limit {
            return Ok(false);
        }
        match frame {
            Frame::Raw(bytes) => counter.write_all(bytes)?,
            Frame::Key(key) => {
                serde_json::to_writer(&mut counter, key)?;
                counter.write_all(b":")?;
            }
            Frame::Value(Value::Array(items)) => {
                counter.write_all(b"[")?;
                stack.push(Frame::Raw(b"]"));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Frame::Value(item));
                    if i > 0 {
                        stack.push(Frame::Raw(b","));
                    }
                }
            }
            Frame::Value(Value::Object(map)) => {
                counter.write_all(b"{")?;
                stack.push(Frame::Raw(b"}"));
                let entries: Vec<_> = map.iter().collect();
                for (i, (key, item)) in entries.into_iter().enumerate().rev() {
                    stack.push(Frame::Value(item));
                    stack.push(Frame::Key(key));
                    if i > 0 {
                        stack.push(Frame::Raw(b","));
                    }
                }
            }
            Frame::Value(Value::String(text)) if text.len() > limit.saturating_sub(counter.written) => {
                // Past the limit: escape only a prefix that fills what is left (escaping is per character, so
                // its escaped form begins the whole string's), not a 64 MiB string for a capped line.
                let mut cut = limit.saturating_sub(counter.written);
                while !text.is_char_boundary(cut) {
                    cut += 1;
                }
                serde_json::to_writer(&mut counter, &text[..cut])?;
                return Ok(false);
            }
            Frame::Value(number @ Value::Number(_)) if js_numbers => {
                counter.write_all(dsh_tools::code::render::render_json_value(number).as_bytes())?;
            }
            Frame::Value(scalar) => serde_json::to_writer(&mut counter, scalar)?,
        }
    }
    Ok(counter.written <= limit)
}

/// The length in bytes of a value's compact JSON (`write_compact`'s output, unlimited), counted without
/// writing it (strings are scanned for the bytes serde_json escapes); `None` as soon as it is known to
/// exceed `limit` (a count that stops early: a 100,000-level value or a 64 MiB string is not walked whole
/// to say it is large).
pub fn compact_len_up_to(value: &Value, limit: usize) -> Option<usize> {
    fn string_len(text: &str) -> usize {
        let extra = |b: &u8| match b {
            b'"' | b'\\' | b'\x08' | b'\t' | b'\n' | b'\x0c' | b'\r' => 1,
            0..=0x1f => 5,
            _ => 0,
        };
        // Eight bytes at a time: a word holding no byte below 0x20, no `"` and no `\` (most of a long
        // string) adds nothing; only words that do are counted byte by byte.
        const ONES: u64 = u64::from_le_bytes([0x01; 8]);
        const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
        let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
        let words = text.as_bytes().chunks_exact(8);
        let tail: usize = words.remainder().iter().map(extra).sum();
        let escapes: usize = words
            .map(|word| {
                let x = u64::from_le_bytes([word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7]]);
                let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0;
                if control || has_zero(x ^ (ONES * u64::from(b'"'))) || has_zero(x ^ (ONES * u64::from(b'\\'))) {
                    word.iter().map(extra).sum()
                } else {
                    0
                }
            })
            .sum();
        text.len() + 2 + escapes + tail
    }
    let mut total: usize = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        if total > limit {
            return None;
        }
        total = total.saturating_add(match value {
            Value::Null => 4,
            Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => n.to_string().len(),
            // Escapes only add: a string longer than what is left settles it without a scan.
            Value::String(text) if text.len() > limit - total => return None,
            Value::String(text) => string_len(text),
            Value::Array(items) => {
                stack.extend(items);
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                stack.extend(map.values());
                2 + map.len().saturating_sub(1) + map.keys().map(|k| string_len(k) + 1).sum::<usize>()
            }
        });
    }
    (total <= limit).then_some(total)
}

/// Renders a value as one compact JSON line (no limit).
pub fn to_line(value: &Value) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = write_compact(&mut out, value, usize::MAX);
    String::from_utf8_lossy(&out).into_owned()
}

/// Clones a value of any depth without recursing.
pub fn clone(value: &Value) -> Value {
    // Build bottom-up: each frame is a container under construction.
    enum Build<'a> {
        Array(Vec<Value>, std::slice::Iter<'a, Value>),
        Object(serde_json::Map<String, Value>, serde_json::map::Iter<'a>, Option<String>),
    }
    fn open(v: &Value) -> Result<Build<'_>, Value> {
        match v {
            Value::Array(items) => Ok(Build::Array(Vec::with_capacity(items.len()), items.iter())),
            Value::Object(map) => Ok(Build::Object(serde_json::Map::new(), map.iter(), None)),
            scalar => Err(scalar.clone()),
        }
    }
    let mut stack = match open(value) {
        Ok(frame) => vec![frame],
        Err(scalar) => return scalar,
    };
    let mut finished: Option<Value> = None;
    loop {
        let Some(top) = stack.last_mut() else {
            return finished.unwrap_or(Value::Null);
        };
        if let Some(done) = finished.take() {
            match top {
                Build::Array(items, _) => items.push(done),
                Build::Object(map, _, key) => {
                    map.insert(key.take().unwrap_or_default(), done);
                }
            }
        }
        let next = match top {
            Build::Array(_, iter) => iter.next(),
            Build::Object(_, iter, key) => iter.next().map(|(k, v)| {
                *key = Some(k.clone());
                v
            }),
        };
        match next {
            Some(child) => match open(child) {
                Ok(frame) => stack.push(frame),
                Err(scalar) => finished = Some(scalar),
            },
            None => {
                finished = stack.pop().map(|frame| match frame {
                    Build::Array(items, _) => Value::Array(items),
                    Build::Object(map, _, _) => Value::Object(map),
                });
            }
        }
    }
}

/// Counts what the writer is given and passes on only the first `limit` bytes: a 64 MiB string in a
/// transcript line is escaped once and never buffered whole.
struct Counting<'w, W: Write> {
    inner: &'w mut W,
    written: usize,
    limit: usize,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.limit.saturating_sub(self.written).min(buf.len());
        self.inner.write_all(&buf[..room])?;
        self.written += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// An object from owned fields, moving each value in. (`json!` serializes interpolated values, which
/// copies and drops them recursively: never use it for values that may be deep.)
pub fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compact_len(value: &Value) -> usize {
        compact_len_up_to(value, usize::MAX).unwrap_or(usize::MAX)
    }

    #[test]
    fn compact_len_is_the_written_length() {
        let values = [
            json!(null),
            json!([true, false, 1, -2.5, 1e21, "", "a\"b\\c\u{1}\n\t\u{7f}é😀"]),
            json!({"k\u{1f}": {"": [], "x": {}}, "n": [null, [[]]]}),
            json!("x".repeat(1000)),
        ];
        for value in values {
            assert_eq!(compact_len(&value), serde_json::to_string(&value).unwrap_or_default().len(), "{value}");
        }
        // Every ASCII character at every position of a string two words and a tail long.
        for c in (0u8..=0x7f).map(char::from) {
            for at in 0..19 {
                let mut text: Vec<char> = "abcdefghijklmnopqrs".chars().collect();
                text[at] = c;
                let value = Value::String(text.into_iter().collect());
                assert_eq!(compact_len(&value), serde_json::to_string(&value).unwrap_or_default().len(), "{value}");
            }
        }
    }

    #[test]
    fn a_capped_count_stops_past_its_limit() {
        let value = json!({"logs": ["x".repeat(100)], "n": [1, 2]});
        let whole = compact_len(&value);
        assert_eq!(compact_len_up_to(&value, whole), Some(whole));
        assert_eq!(compact_len_up_to(&value, whole - 1), None);
        assert_eq!(compact_len_up_to(&value, 50), None);
    }

    #[test]
    fn a_capped_line_is_the_start_of_the_whole_one() {
        let value = json!({"logs": ["é\"x".repeat(5000)], "result": 3});
        let whole = to_line(&value);
        for limit in [0, 1, 9, 10, 11, 12, 13, 100, 4097] {
            let mut out = Vec::new();
            let complete = write_compact(&mut out, &value, limit).unwrap_or(true);
            assert!(!complete, "limit {limit}");
            assert_eq!(out, whole.as_bytes()[..limit], "limit {limit}");
        }
        let mut out = Vec::new();
        assert!(write_compact(&mut out, &value, whole.len()).unwrap_or(false));
        assert_eq!(out, whole.as_bytes());
    }
}
