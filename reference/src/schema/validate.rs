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

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Container,
    OneOf,
}

struct Child<'a> {
    node: &'a Value,
    value: &'a Value,
    path: PathId,
}

struct Frame<'a> {
    kind: Kind,
    children: Vec<Child<'a>>,
    next: usize,
    violations: Vec<String>,
    tail: Vec<String>,
    matches: usize,
    path: PathId,
}

enum Started<'a> {
    Done(Vec<String>),
    Frame(Frame<'a>),
}

/// Validate `value` against `schema`; `root` labels the root in diagnostics (`value` for outputs, the
/// empty string for arguments, whose root then reads `arguments`).
pub fn validate_json_schema_value(schema: &Value, value: &Value, root: &str) -> Vec<String> {
    let mut paths = Paths::new(root);
    let mut frames: Vec<Frame<'_>> = Vec::new();
    let mut pending = Some(start(schema, value, ROOT, &mut paths));
    loop {
        if let Some(started) = pending.take() {
            match started {
                Started::Frame(frame) => frames.push(frame),
                Started::Done(result) => match frames.last_mut() {
                    None => return result,
                    Some(parent) => receive(parent, result),
                },
            }
        }
        let Some(top) = frames.last_mut() else { return Vec::new() };
        if let Some(child) = top.children.get(top.next) {
            let (node, value, path) = (child.node, child.value, child.path);
            top.next += 1;
            pending = Some(start(node, value, path, &mut paths));
            continue;
        }
        let Some(done) = frames.pop() else { return Vec::new() };
        let result = if done.kind == Kind::OneOf {
            if done.matches == 1 {
                Vec::new()
            } else {
                vec![format!(
                    "\"{}\" must match exactly one oneOf branch (matched {})",
                    paths.diagnostic(done.path),
                    done.matches
                )]
            }
        } else {
            let mut violations = done.violations;
            violations.extend(done.tail);
            violations
        };
        pending = Some(Started::Done(result));
    }
}

fn receive(parent: &mut Frame<'_>, result: Vec<String>) {
    if parent.kind == Kind::OneOf {
        if result.is_empty() {
            parent.matches += 1;
        }
    } else {
        parent.violations.extend(result);
    }
}

fn one(paths: &Paths<'_>, path: PathId, what: &str) -> Started<'static> {
    Started::Done(vec![format!("\"{}\" {what}", paths.diagnostic(path))])
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

fn start<'a>(node: &'a Value, value: &'a Value, path: PathId, paths: &mut Paths<'a>) -> Started<'a> {
    let Value::Object(node) = node else { return Started::Done(Vec::new()) };
    let kw = Keywords::scan(node);
    if let Some(one_of) = kw.one_of {
        let branches: &[Value] = match one_of {
            Value::Array(b) => b,
            _ => &[],
        };
        return Started::Frame(Frame {
            kind: Kind::OneOf,
            children: branches.iter().map(|b| Child { node: b, value, path }).collect(),
            next: 0,
            violations: Vec::new(),
            tail: Vec::new(),
            matches: 0,
            path,
        });
    }
    let ty = match kw.ty {
        None => return Started::Done(Vec::new()),
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return one(paths, path, "must be a lossless JSON value"),
    };
    match ty {
        "object" => {
            let Value::Object(object) = value else { return one(paths, path, "must be an object") };
            let properties = match kw.properties {
                Some(Value::Object(p)) => Some(p),
                _ => None,
            };
            let mut violations = Vec::new();
            if let Some(Value::Array(required)) = kw.required {
                for key in required.iter().filter_map(Value::as_str) {
                    if lookup(object, key).is_none() {
                        let p = paths.push(path, Seg::Key(key));
                        violations.push(format!("missing required property \"{}\"", paths.render(p)));
                    }
                }
            }
            let mut children = Vec::new();
            for (key, child) in properties.into_iter().flatten() {
                if let Some(v) = lookup(object, key) {
                    let p = paths.push(path, Seg::Key(key));
                    children.push(Child { node: child, value: v, path: p });
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
            Started::Frame(Frame { kind: Kind::Container, children, next: 0, violations, tail, matches: 0, path })
        }
        "array" => {
            let Value::Array(items) = value else { return one(paths, path, "must be an array") };
            let children = match kw.items {
                None => Vec::new(),
                Some(item_schema) => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| Child { node: item_schema, value: v, path: paths.push(path, Seg::Index(i)) })
                    .collect(),
            };
            Started::Frame(Frame {
                kind: Kind::Container,
                children,
                next: 0,
                violations: Vec::new(),
                tail: Vec::new(),
                matches: 0,
                path,
            })
        }
        "string" => match value {
            Value::String(_) => scalar(&kw, value, paths, path),
            _ => one(paths, path, "must be a string"),
        },
        "number" => match value {
            Value::Number(n) if is_json_number(n) => scalar(&kw, value, paths, path),
            Value::Number(_) => one(paths, path, "must be a finite JSON number"),
            _ => one(paths, path, "must be a number"),
        },
        "integer" => match value {
            Value::Number(n) if is_json_integer(n) => scalar(&kw, value, paths, path),
            _ => one(paths, path, "must be an integer"),
        },
        "boolean" => match value {
            Value::Bool(_) => scalar(&kw, value, paths, path),
            _ => one(paths, path, "must be a boolean"),
        },
        "null" => match value {
            Value::Null => scalar(&kw, value, paths, path),
            _ => one(paths, path, "must be null"),
        },
        _ => one(paths, path, "must be a lossless JSON value"),
    }
}

/// `enum` then `const` on a type-correct scalar.
fn scalar(kw: &Keywords<'_>, value: &Value, paths: &Paths<'_>, path: PathId) -> Started<'static> {
    if let Some(allowed) = kw.allowed {
        let listed = match allowed {
            Value::Array(entries) => entries.iter().any(|e| js_scalar_eq(e, value)),
            _ => false,
        };
        if !listed {
            return Started::Done(vec![format!(
                "\"{}\" must be one of {}",
                paths.diagnostic(path),
                js_stringify_shallow(allowed)
            )]);
        }
    }
    if let Some(expected) = kw.constant {
        if !js_scalar_eq(expected, value) {
            return Started::Done(vec![format!(
                "\"{}\" must be {}",
                paths.diagnostic(path),
                js_stringify_shallow(expected)
            )]);
        }
    }
    Started::Done(Vec::new())
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
