//! Depth-safe JSON: parsing one protocol line without a depth limit, and the operations that are
//! recursive on `serde_json::Value` (drop, equality, printing) done with explicit work stacks instead.
//!
//! Hazard (DESIGN.md § Known hazards): a `Value` 100,000 levels deep overflows an 8 MiB stack when it is
//! dropped, cloned, compared, `Debug`-printed or `to_string`-ed. Whoever holds a value that came off the
//! wire must give it to [`dismantle`] (or keep it in a [`Deep`]) instead of letting it drop, and must
//! print it with [`write`].

use serde::Deserialize;
use serde_json::Value;

mod build;

/// Parses one JSON text with no depth limit, in one pass with an explicit stack (`json/build.rs`: no
/// recursion, so a 100,000-level corpus item touches no deep stack).
///
/// Text it does not accept goes to serde_json for the error message: its recursion limit lifted,
/// `serde_stacker` growing the stack on the heap as the parse descends, and the text checked without
/// building anything first (a parse that fails half-way would drop a deep subtree recursively).
pub fn parse_line(line: &str) -> Result<Value, String> {
    if let Some(value) = build::parse(line) {
        return Ok(value);
    }
    check_syntax(line)?;
    let mut de = serde_json::Deserializer::from_str(line);
    de.disable_recursion_limit();
    let stacked = serde_stacker::Deserializer::new(&mut de);
    let value = Value::deserialize(stacked).map_err(|e| e.to_string())?;
    Ok(value)
}

pub(crate) fn check_syntax(line: &str) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(line);
    de.disable_recursion_limit();
    let stacked = serde_stacker::Deserializer::new(&mut de);
    serde::de::IgnoredAny::deserialize(stacked).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())
}

/// Frees a value of any depth without recursion.
pub fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Clones a value of any depth without recursion (`Value::clone` recurses).
pub fn deep_clone(value: &Value) -> Value {
    enum Slot<'a> {
        Leaf(&'a Value),
        Array(usize),
        Object(Vec<&'a str>),
    }
    // Post-order: children are built first, then gathered by their parent from `built`.
    let mut todo: Vec<(bool, &Value)> = vec![(false, value)];
    let mut plan: Vec<Slot<'_>> = Vec::new();
    while let Some((done, v)) = todo.pop() {
        match (done, v) {
            (false, Value::Array(items)) => {
                todo.push((true, v));
                todo.extend(items.iter().rev().map(|i| (false, i)));
            }
            (false, Value::Object(map)) => {
                todo.push((true, v));
                todo.extend(map.values().rev().map(|i| (false, i)));
            }
            (true, Value::Array(items)) => plan.push(Slot::Array(items.len())),
            (true, Value::Object(map)) => plan.push(Slot::Object(map.keys().map(String::as_str).collect())),
            (_, leaf) => plan.push(Slot::Leaf(leaf)),
        }
    }
    let mut built: Vec<Value> = Vec::new();
    for slot in plan {
        let v = match slot {
            Slot::Leaf(leaf) => leaf.clone(),
            Slot::Array(n) => Value::Array(built.split_off(built.len() - n)),
            Slot::Object(keys) => {
                let values = built.split_off(built.len() - keys.len());
                Value::Object(keys.into_iter().map(str::to_owned).zip(values).collect())
            }
        };
        built.push(v);
    }
    built.pop().unwrap_or(Value::Null)
}

/// A value that is dismantled, not recursively dropped, when it goes out of scope.
#[derive(Default)]
pub struct Deep(pub Value);

impl Drop for Deep {
    fn drop(&mut self) {
        dismantle(std::mem::take(&mut self.0));
    }
}

impl std::fmt::Debug for Deep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&write(&self.0, false))
    }
}

/// Nesting depth (a scalar is 0), without recursion.
pub fn depth(value: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    max
}

/// Structural equality without recursion (object key order ignored, as `Value`'s `==`).
pub fn deep_eq(a: &Value, b: &Value) -> bool {
    deep_eq_where(a, b, |_, _| true)
}

/// [`deep_eq`], false as well as soon as a pair of objects (`a`'s, `b`'s) fails `admit` (the matcher uses
/// it to leave any value holding a matcher to its own walk, and to require key order where it counts).
pub fn deep_eq_where(
    a: &Value,
    b: &Value,
    admit: impl Fn(&serde_json::Map<String, Value>, &serde_json::Map<String, Value>) -> bool,
) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                if x.len() != y.len() {
                    return false;
                }
                stack.extend(x.iter().zip(y.iter()));
            }
            (Value::Object(x), Value::Object(y)) => {
                if x.len() != y.len() || !admit(x, y) {
                    return false;
                }
                for (k, v) in x {
                    match y.get(k) {
                        Some(w) => stack.push((v, w)),
                        None => return false,
                    }
                }
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => return false,
            (x, y) => {
                if x != y {
                    return false;
                }
            }
        }
    }
    true
}

enum Item<'a> {
    Value(&'a Value, usize),
    Text(&'static str),
    Key(&'a str),
    Newline(usize),
}

/// Below this level pretty output turns compact: indenting a 100,000-deep value would take quadratic
/// space.
pub const PRETTY_DEPTH: usize = 32;

/// Serializes without recursion: compact (one protocol line) or pretty (two-space indent, the layout
/// of `serde_json::to_string_pretty`, compact below [`PRETTY_DEPTH`] levels).
pub fn write(value: &Value, pretty: bool) -> String {
    let mut out = String::new();
    let mut stack = vec![Item::Value(value, 0)];
    while let Some(item) = stack.pop() {
        match item {
            Item::Text(t) => out.push_str(t),
            Item::Key(k) => {
                push_string(&mut out, k);
                out.push_str(if pretty { ": " } else { ":" });
            }
            Item::Newline(level) => {
                if pretty {
                    out.push('\n');
                    for _ in 0..level {
                        out.push_str("  ");
                    }
                }
            }
            Item::Value(v, level) => match v {
                Value::Array(items) if items.is_empty() => out.push_str("[]"),
                Value::Object(map) if map.is_empty() => out.push_str("{}"),
                Value::Array(items) => {
                    out.push('[');
                    let nl = level < PRETTY_DEPTH;
                    stack.push(Item::Text("]"));
                    if nl {
                        stack.push(Item::Newline(level));
                    }
                    for (i, child) in items.iter().enumerate().rev() {
                        stack.push(Item::Value(child, level + 1));
                        if nl {
                            stack.push(Item::Newline(level + 1));
                        }
                        if i > 0 {
                            stack.push(Item::Text(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    let nl = level < PRETTY_DEPTH;
                    stack.push(Item::Text("}"));
                    if nl {
                        stack.push(Item::Newline(level));
                    }
                    for (i, (k, child)) in map.iter().enumerate().rev() {
                        stack.push(Item::Value(child, level + 1));
                        stack.push(Item::Key(k));
                        if nl {
                            stack.push(Item::Newline(level + 1));
                        }
                        if i > 0 {
                            stack.push(Item::Text(","));
                        }
                    }
                }
                Value::String(s) => push_string(&mut out, s),
                Value::Number(n) => out.push_str(&n.to_string()),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Null => out.push_str("null"),
            },
        }
    }
    out
}

fn push_string(out: &mut String, s: &str) {
    // Serializing a `&str` is not recursive.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

/// How loader and checker messages name a value's JSON type ("a mapping", "a list", ...).
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn write_matches_serde_json() {
        let v = json!({"a": [1, 2.5, {"b": null, "c": []}], "d": {}, "e": "q\"\n", "f": true});
        assert_eq!(write(&v, false), serde_json::to_string(&v).expect("json"));
        assert_eq!(write(&v, true), serde_json::to_string_pretty(&v).expect("json"));
        assert_eq!(depth(&v), 3);
        assert!(deep_eq(&v, &v.clone()));
        assert!(!deep_eq(&v, &json!({"a": 1})));
    }

    #[test]
    fn parse_line_rejects_trailing_text() {
        assert!(parse_line("{} x").is_err());
        assert!(parse_line("[1,").is_err());
        assert_eq!(parse_line(" {\"a\":1} ").ok(), Some(json!({"a": 1})));
    }
}
