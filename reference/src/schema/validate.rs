//! Value validation against an asserted raw schema (upstream `validateJsonSchemaValue`): total for any
//! JSON value, returning path-qualified violations in upstream's walk order — per object: missing required
//! properties, then declared properties in schema order, then undeclared keys under
//! `additionalProperties: false`; per array: items in order; `oneOf` counts exactly-one matches.
//!
//! Walks with explicit frames, never recursion, so 100,000-level values and schemas are fine.
//!
//! Spec: ARG-009..ARG-014, OUT-003.

use serde_json::{Map, Value};

use super::path::{PathId, Paths, ROOT, Seg};
use crate::value::{is_json_integer, is_json_number, js_scalar_eq, js_stringify_shallow};

/// The children still to visit under one container frame, produced lazily (no per-node child lists).
enum Pending<'a> {
    /// Declared properties of an object schema, matched against the value's keys.
    Properties { schema: serde_json::map::Iter<'a>, object: &'a Map<String, Value> },
    /// Array items under one item schema.
    Items { schema: &'a Value, items: std::iter::Enumerate<std::slice::Iter<'a, Value>> },
    /// `oneOf` branches over the same value.
    Branches { branches: std::slice::Iter<'a, Value>, value: &'a Value },
}

/// One open container. Violations go straight to the shared output; a `oneOf` frame marks where the current
/// branch's output starts, counts a match when the branch added nothing, and truncates it away.
struct Frame<'a> {
    pending: Pending<'a>,
    /// `additionalProperties: false` violations, reported after the children.
    tail: Vec<String>,
    path: PathId,
    branch_active: bool,
    mark: usize,
    matches: usize,
}

impl<'a> Frame<'a> {
    fn new(pending: Pending<'a>, tail: Vec<String>, path: PathId) -> Self {
        Self { pending, tail, path, branch_active: false, mark: 0, matches: 0 }
    }

    fn is_one_of(&self) -> bool {
        matches!(self.pending, Pending::Branches { .. })
    }

    /// The next (schema, value, path) to visit.
    fn next_child(&mut self, paths: &mut Paths<'a>) -> Option<(&'a Value, &'a Value, PathId)> {
        match &mut self.pending {
            Pending::Properties { schema, object } => {
                for (key, child) in schema.by_ref() {
                    if let Some(v) = lookup(object, key) {
                        return Some((child, v, paths.push(self.path, Seg::Key(key))));
                    }
                }
                None
            }
            Pending::Items { schema, items } => {
                let (i, v) = items.next()?;
                Some((schema, v, paths.push(self.path, Seg::Index(i))))
            }
            Pending::Branches { branches, value } => branches.next().map(|b| (b, *value, self.path)),
        }
    }
}

/// Validate `value` against `schema`; `root` labels the root in diagnostics (`value` for outputs, the
/// empty string for arguments, whose root then reads `arguments`).
pub fn validate_json_schema_value(schema: &Value, value: &Value, root: &str) -> Vec<String> {
    let mut paths = Paths::new(root);
    let mut out = Vec::new();
    let mut frames: Vec<Frame<'_>> = Vec::new();
    if let Some(frame) = start(schema, value, ROOT, &mut paths, &mut out) {
        frames.push(frame);
    }
    while let Some(top) = frames.last_mut() {
        if top.branch_active {
            top.branch_active = false;
            if out.len() == top.mark {
                top.matches += 1;
            }
            out.truncate(top.mark);
        }
        if let Some((node, value, path)) = top.next_child(&mut paths) {
            if top.is_one_of() {
                top.branch_active = true;
                top.mark = out.len();
            }
            if let Some(frame) = start(node, value, path, &mut paths, &mut out) {
                frames.push(frame);
            }
            continue;
        }
        let Some(done) = frames.pop() else { break };
        if done.is_one_of() {
            if done.matches != 1 {
                out.push(format!(
                    "\"{}\" must match exactly one oneOf branch (matched {})",
                    paths.diagnostic(done.path),
                    done.matches
                ));
            }
        } else {
            out.extend(done.tail);
        }
    }
    out
}

fn one<'a>(paths: &Paths<'_>, path: PathId, what: &str, out: &mut Vec<String>) -> Option<Frame<'a>> {
    out.push(format!("\"{}\" {what}", paths.diagnostic(path)));
    None
}

/// The constraint keywords of one schema node, found in a single pass (schema nodes have few keys, so a
/// scan beats one hash lookup per keyword).
#[derive(Default)]
struct Keywords<'a> {
    ty: Option<&'a Value>,
    one_of: Option<&'a Value>,
    properties: Option<&'a Value>,
    required: Option<&'a Value>,
    additional: Option<&'a Value>,
    items: Option<&'a Value>,
    allowed: Option<&'a Value>,
    constant: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    fn scan(node: &'a Map<String, Value>) -> Self {
        let mut k = Self::default();
        for (key, value) in node {
            match key.as_str() {
                "type" => k.ty = Some(value),
                "oneOf" => k.one_of = Some(value),
                "properties" => k.properties = Some(value),
                "required" => k.required = Some(value),
                "additionalProperties" => k.additional = Some(value),
                "items" => k.items = Some(value),
                "enum" => k.allowed = Some(value),
                "const" => k.constant = Some(value),
                _ => {}
            }
        }
        k
    }
}

/// Look a key up in a value object: a scan for small objects, the index otherwise.
fn lookup<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if object.len() <= 8 {
        object.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        object.get(key)
    }
}

fn start<'a>(
    node: &'a Value,
    value: &'a Value,
    path: PathId,
    paths: &mut Paths<'a>,
    out: &mut Vec<String>,
) -> Option<Frame<'a>> {
    let Value::Object(node) = node else { return None };
    let kw = Keywords::scan(node);
    if let Some(one_of) = kw.one_of {
        let branches: &[Value] = match one_of {
            Value::Array(b) => b,
            _ => &[],
        };
        return Some(Frame::new(Pending::Branches { branches: branches.iter(), value }, Vec::new(), path));
    }
    let ty = match kw.ty {
        None => return None,
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return one(paths, path, "must be a lossless JSON value", out),
    };
    match ty {
        "object" => {
            let Value::Object(object) = value else { return one(paths, path, "must be an object", out) };
            let properties = match kw.properties {
                Some(Value::Object(p)) => Some(p),
                _ => None,
            };
            if let Some(Value::Array(required)) = kw.required {
                for key in required.iter().filter_map(Value::as_str) {
                    if lookup(object, key).is_none() {
                        let p = paths.push(path, Seg::Key(key));
                        out.push(format!("missing required property \"{}\"", paths.render(p)));
                    }
                }
            }
            let mut tail = Vec::new();
            if kw.additional == Some(&Value::Bool(false)) {
                for key in object.keys() {
                    if properties.is_none_or(|p| lookup(p, key).is_none()) {
                        let p = paths.push(path, Seg::Key(key));
                        tail.push(format!(
                            "\"{}\" is not a declared property (additionalProperties: false)",
                            paths.render(p)
                        ));
                    }
                }
            }
            static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
            let declared = properties.unwrap_or_else(|| EMPTY.get_or_init(Map::new));
            Some(Frame::new(Pending::Properties { schema: declared.iter(), object }, tail, path))
        }
        "array" => {
            let Value::Array(items) = value else { return one(paths, path, "must be an array", out) };
            kw.items.map(|schema| Frame::new(Pending::Items { schema, items: items.iter().enumerate() }, Vec::new(), path))
        }
        "string" => match value {
            Value::String(_) => scalar(&kw, value, paths, path, out),
            _ => one(paths, path, "must be a string", out),
        },
        "number" => match value {
            Value::Number(n) if is_json_number(n) => scalar(&kw, value, paths, path, out),
            Value::Number(_) => one(paths, path, "must be a finite JSON number", out),
            _ => one(paths, path, "must be a number", out),
        },
        "integer" => match value {
            Value::Number(n) if is_json_integer(n) => scalar(&kw, value, paths, path, out),
            _ => one(paths, path, "must be an integer", out),
        },
        "boolean" => match value {
            Value::Bool(_) => scalar(&kw, value, paths, path, out),
            _ => one(paths, path, "must be a boolean", out),
        },
        "null" => match value {
            Value::Null => scalar(&kw, value, paths, path, out),
            _ => one(paths, path, "must be null", out),
        },
        _ => one(paths, path, "must be a lossless JSON value", out),
    }
}

/// `enum` then `const` on a type-correct scalar.
fn scalar<'a>(kw: &Keywords<'_>, value: &Value, paths: &Paths<'_>, path: PathId, out: &mut Vec<String>) -> Option<Frame<'a>> {
    if let Some(allowed) = kw.allowed {
        let listed = match allowed {
            Value::Array(entries) => entries.iter().any(|e| js_scalar_eq(e, value)),
            _ => false,
        };
        if !listed {
            out.push(format!("\"{}\" must be one of {}", paths.diagnostic(path), js_stringify_shallow(allowed)));
            return None;
        }
    }
    if let Some(expected) = kw.constant {
        if !js_scalar_eq(expected, value) {
            out.push(format!("\"{}\" must be {}", paths.diagnostic(path), js_stringify_shallow(expected)));
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::dismantle;
    use serde_json::json;

    #[test]
    fn walk_order_matches_upstream() {
        let schema = json!({"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"c":{"type":"null"}},"additionalProperties":false});
        let got = validate_json_schema_value(&schema, &json!({"c":1,"d":2,"a":3}), "value");
        assert_eq!(
            got,
            [
                "missing required property \"value.b\"",
                "\"value.a\" must be a string",
                "\"value.c\" must be null",
                "\"value.d\" is not a declared property (additionalProperties: false)"
            ]
        );
        let schema = json!({"type":"array","items":{"type":"number","enum":[1.5,1e21,1e-7,100]}});
        let got = validate_json_schema_value(&schema, &json!([1, 2.5, "x", 1e21, 0.5]), "value");
        assert_eq!(got[0], "\"value[0]\" must be one of [1.5,1e+21,1e-7,100]");
        assert_eq!(got[2], "\"value[2]\" must be a number");
        assert_eq!(got.len(), 4);
        let schema = json!({"oneOf":[{"type":"number"},{"type":"integer"}]});
        assert_eq!(
            validate_json_schema_value(&schema, &json!(3), "value"),
            ["\"value\" must match exactly one oneOf branch (matched 2)"]
        );
        let schema = json!({"type":"object","required":["a"],"properties":{"a":{"type":"string"}}});
        assert_eq!(validate_json_schema_value(&schema, &json!({}), ""), ["missing required property \"a\""]);
        assert_eq!(validate_json_schema_value(&schema, &json!(5), ""), ["\"arguments\" must be an object"]);
    }

    #[test]
    fn deep_schema_and_value_do_not_overflow() {
        const DEPTH: usize = 100_000;
        let mut schema = json!({"type":"string"});
        let mut value = json!(5);
        for _ in 0..DEPTH {
            let mut s = Map::new();
            s.insert("type".into(), json!("array"));
            s.insert("items".into(), schema);
            schema = Value::Object(s);
            value = Value::Array(vec![value]);
        }
        let got = validate_json_schema_value(&schema, &value, "value");
        assert_eq!(got.len(), 1);
        assert!(got[0].ends_with("[0]\" must be a string"));
        assert_eq!(got[0].len(), "\"value".len() + DEPTH * 3 + "\" must be a string".len());
        assert!(crate::schema::check::schema_violations(&schema).is_empty());
        dismantle(schema);
        dismantle(value);
    }
}
