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
            Frame::Value(number @ Value::Number(_)) if js_numbers => {
                counter.write_all(dsh_tools::code::render::render_json_value(number).as_bytes())?;
            }
            Frame::Value(scalar) => serde_json::to_writer(&mut counter, scalar)?,
        }
    }
    Ok(counter.written <= limit)
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
