//! The `{ $nested: { depth, key?, leaf } }` matcher (`spec/README.md` § Results and matchers): a value
//! wrapped `depth` times around `leaf` — each level a one-item list, or with `key` a one-member mapping of
//! that key — so a scenario can state a 5,000-level value whole without spelling it (the dispatch log's
//! copy of a deep argument, RUN-015 / RUN-007). Parsing, the level walk the matcher runs, and the loader's
//! scan that rejects a malformed `$nested` with its file, line and field.

use crate::json;
use serde_json::{Map, Value};

/// The deepest `depth` a `$nested` may state (above any value the suite moves: the protocol carries
/// 100,000 levels).
pub const MAX_DEPTH: u64 = 1_000_000;

const SHAPE: &str = "`$nested` takes { depth: integer 0..=1000000, key?: string, leaf: expectation }";

/// A parsed `$nested`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nested<'a> {
    /// How many wrappers stand around the leaf (0: the leaf itself).
    pub depth: u64,
    /// `None`: each wrapper is a one-item list; `Some(k)`: a mapping whose only member is `k`.
    pub key: Option<&'a str>,
    /// The expectation the innermost value must match (matchers allowed).
    pub leaf: &'a Value,
}

impl<'a> Nested<'a> {
    /// Parses the matcher's argument; `Err` says what is malformed.
    pub fn parse(arg: &'a Value) -> Result<Nested<'a>, String> {
        let Value::Object(spec) = arg else { return Err(format!("{SHAPE}; got {}", json::kind(arg))) };
        if let Some(other) = spec.keys().find(|k| !matches!(k.as_str(), "depth" | "key" | "leaf")) {
            return Err(format!("{SHAPE}; unknown key {other:?}"));
        }
        let depth = match spec.get("depth") {
            None => return Err(format!("{SHAPE}; `depth` is missing")),
            Some(d) => d.as_u64().filter(|d| *d <= MAX_DEPTH).ok_or_else(|| format!("{SHAPE}; `depth` is {d}"))?,
        };
        let key = match spec.get("key") {
            None => None,
            Some(Value::String(k)) => Some(k.as_str()),
            Some(other) => return Err(format!("{SHAPE}; `key` is {}", json::kind(other))),
        };
        let leaf = spec.get("leaf").ok_or_else(|| format!("{SHAPE}; `leaf` is missing"))?;
        Ok(Nested { depth, key, leaf })
    }

    /// Walks `actual` down the wrappers: `Ok` with the innermost value, or `Err((level, what))` at the
    /// first level (0-based) that is not the wrapper.
    pub fn unwrap<'v>(&self, actual: &'v Value) -> Result<&'v Value, (u64, String)> {
        let mut cur = actual;
        for level in 0..self.depth {
            cur = match (self.key, cur) {
                (None, Value::Array(items)) if items.len() == 1 => &items[0],
                (Some(k), Value::Object(m)) if m.len() == 1 && m.contains_key(k) => &m[k],
                _ => return Err((level, format!("expected {}, got {}", self.wrapper(), describe(cur)))),
            };
        }
        Ok(cur)
    }

    /// What one level must be.
    pub fn wrapper(&self) -> String {
        match self.key {
            None => "a one-item list".to_owned(),
            Some(k) => format!("a mapping whose only key is {k:?}"),
        }
    }

    /// `N levels of a one-item list`, for messages.
    pub fn describe(&self) -> String {
        format!("{} levels of {}", self.depth, self.wrapper())
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Array(items) => format!("a list of {} items", items.len()),
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().take(4).map(|k| format!("{k:?}")).collect();
            format!("a mapping with keys [{}{}]", keys.join(", "), if m.len() > 4 { ", …" } else { "" })
        }
        other => json::kind(other).to_owned(),
    }
}

/// Every malformed `$nested` in a scenario document: `(JSON pointer, field path, message)`, in document
/// order. A `$nested` is any mapping whose only key is `$nested`, wherever it stands (the loader reports
/// it at load time, so a broken one is an error of the file, not of the trial that reaches it).
pub fn malformed(doc: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<(&Value, String, String)> = vec![(doc, String::new(), String::new())];
    while let Some((v, pointer, field)) = stack.pop() {
        match v {
            Value::Object(m) => {
                if let (1, Some(arg)) = (m.len(), m.get("$nested")) {
                    if let Err(message) = Nested::parse(arg) {
                        out.push((pointer.clone(), field.clone(), message));
                    }
                }
                push_children(&mut stack, m, &pointer, &field);
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((item, format!("{pointer}/{i}"), format!("{field}[{i}]")));
                }
            }
            _ => {}
        }
    }
    out
}

fn push_children<'v>(stack: &mut Vec<(&'v Value, String, String)>, m: &'v Map<String, Value>, pointer: &str, field: &str) {
    for (k, child) in m.iter().rev() {
        let escaped = k.replace('~', "~0").replace('/', "~1");
        let name = if field.is_empty() { k.clone() } else { format!("{field}.{k}") };
        stack.push((child, format!("{pointer}/{escaped}"), name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deep(depth: usize, leaf: Value) -> Value {
        (0..depth).fold(leaf, |v, _| Value::Array(vec![v]))
    }

    #[test]
    fn parses_and_unwraps_lists_and_keys() {
        let spec = json!({ "depth": 3, "leaf": [] });
        let n = Nested::parse(&spec).unwrap();
        assert_eq!(n.unwrap(&deep(3, json!([]))), Ok(&json!([])));
        assert_eq!(n.unwrap(&deep(2, json!([]))).unwrap_err().0, 2);
        let keyed = json!({ "depth": 2, "key": "k", "leaf": 1 });
        let n = Nested::parse(&keyed).unwrap();
        assert_eq!(n.unwrap(&json!({ "k": { "k": 1 } })), Ok(&json!(1)));
        assert!(n.unwrap(&json!({ "k": { "k": 1, "x": 2 } })).is_err());
    }

    #[test]
    fn malformed_names_the_field() {
        let doc = json!({ "steps": [{ "expect": { "value": { "$nested": { "depth": -1, "leaf": 1 } } } },
            { "expect": { "$nested": { "depth": 1 } } }, { "expect": { "$nested": { "depth": 1, "leaf": 0, "x": 1 } } },
            { "expect": { "$nested": { "depth": 2, "key": 3, "leaf": 0 } } }, { "expect": { "$nested": 5 } }] });
        let found = malformed(&doc);
        let fields: Vec<&str> = found.iter().map(|f| f.1.as_str()).collect();
        assert_eq!(fields, ["steps[0].expect.value", "steps[1].expect", "steps[2].expect", "steps[3].expect", "steps[4].expect"]);
        assert_eq!(found[0].0, "/steps/0/expect/value");
        assert!(found[1].2.contains("`leaf` is missing"), "{}", found[1].2);
        assert!(found[2].2.contains("unknown key \"x\""));
        assert!(found[3].2.contains("`key` is a number"));
        assert!(malformed(&json!({ "a": { "$nested": { "depth": 0, "leaf": null } } })).is_empty());
    }
}
