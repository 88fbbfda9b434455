//! The enforced JSON Schema subset, as a yes/no verdict: the SDK renderers render a schema only when
//! the whole tree belongs to it and degrade it whole otherwise (TypeScript `unknown`, Python `Any`).
//! The subset: any JSON root object; annotation-only schemas; one scalar `type`; object
//! `properties`/`required`/boolean `additionalProperties`; array `items`; type-correct scalar
//! `enum`/`const`; `oneOf` with at least two branches. Walked with an explicit stack.

use serde_json::{Map, Value};

use super::js;

const SCALAR_TYPES: [&str; 5] = ["string", "number", "integer", "boolean", "null"];
const ONE_OF_SIBLINGS: [&str; 6] = ["properties", "required", "additionalProperties", "items", "enum", "const"];

/// Whether a JSON value is lossless (the annotation rule): no negative zero, no non-finite number.
fn is_lossless(root: &Value) -> bool {
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(n) => {
                if !js::is_lossless_number(js::js_number(n)) {
                    return false;
                }
            }
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
    true
}

/// A scalar of the declared type (`number`/`integer` lossless, `integer` integral).
fn scalar_matches(ty: &str, value: &Value) -> bool {
    match (ty, value) {
        ("string", Value::String(_)) | ("boolean", Value::Bool(_)) | ("null", Value::Null) => true,
        ("number", Value::Number(n)) => js::is_lossless_number(js::js_number(n)),
        ("integer", Value::Number(n)) => {
            let x = js::js_number(n);
            js::is_lossless_number(x) && js::is_integer(x)
        }
        _ => false,
    }
}

/// `Array.prototype.includes` (SameValueZero) over validated scalars.
fn same_scalar(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => js::js_number(x) == js::js_number(y),
        _ => a == b,
    }
}

fn scalar_node_ok(ty: &str, node: &Map<String, Value>) -> bool {
    let enum_valid = match node.get("enum") {
        None => None,
        Some(Value::Array(items)) if !items.is_empty() && items.iter().all(|v| scalar_matches(ty, v)) => Some(items),
        Some(_) => return false,
    };
    match node.get("const") {
        None => true,
        Some(value) => {
            scalar_matches(ty, value) && enum_valid.is_none_or(|items| items.iter().any(|item| same_scalar(item, value)))
        }
    }
}

/// Whether `root` belongs to the enforced subset.
pub(crate) fn is_supported(root: &Value) -> bool {
    let mut stack: Vec<&Value> = vec![root];
    while let Some(node) = stack.pop() {
        let Value::Object(map) = node else { return false };
        for (key, value) in map {
            let ok = match key.as_str() {
                "type" | "oneOf" | "properties" | "required" | "additionalProperties" | "items" | "enum" | "const" => true,
                "description" | "title" => value.is_string(),
                "default" | "examples" => is_lossless(value),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        let ty = map.get("type");
        let one_of = map.get("oneOf");
        match (ty, one_of) {
            (Some(_), Some(_)) => return false,
            (None, None) => {
                if ONE_OF_SIBLINGS.iter().any(|k| map.contains_key(*k)) {
                    return false;
                }
            }
            (None, Some(branches)) => {
                if ONE_OF_SIBLINGS.iter().any(|k| map.contains_key(*k)) {
                    return false;
                }
                match branches {
                    Value::Array(items) if items.len() >= 2 => stack.extend(items),
                    _ => return false,
                }
            }
            (Some(ty), None) => {
                let Some(ty) = ty.as_str() else { return false };
                match ty {
                    "object" => {
                        if ["items", "enum", "const"].iter().any(|k| map.contains_key(*k)) {
                            return false;
                        }
                        if !matches!(map.get("additionalProperties"), None | Some(Value::Bool(_))) {
                            return false;
                        }
                        let properties = match map.get("properties") {
                            None => None,
                            Some(Value::Object(properties)) => Some(properties),
                            Some(_) => return false,
                        };
                        if let Some(required) = map.get("required") {
                            let Value::Array(names) = required else { return false };
                            for name in names {
                                let Value::String(name) = name else { return false };
                                if !properties.is_some_and(|p| p.contains_key(name)) {
                                    return false;
                                }
                            }
                        }
                        if let Some(properties) = properties {
                            stack.extend(properties.values());
                        }
                    }
                    "array" => {
                        if ["properties", "required", "additionalProperties", "enum", "const"]
                            .iter()
                            .any(|k| map.contains_key(*k))
                        {
                            return false;
                        }
                        if let Some(items) = map.get("items") {
                            stack.push(items);
                        }
                    }
                    _ if SCALAR_TYPES.contains(&ty) => {
                        if ["properties", "required", "additionalProperties", "items"].iter().any(|k| map.contains_key(*k)) {
                            return false;
                        }
                        if !scalar_node_ok(ty, map) {
                            return false;
                        }
                    }
                    _ => return false,
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn verdicts() {
        assert!(is_supported(&json!({})));
        assert!(is_supported(&json!({"description": "any"})));
        assert!(!is_supported(&json!(null)));
        assert!(!is_supported(&json!({"$ref": "#/x"})));
        assert!(!is_supported(&json!({"type": ["string", "null"]})));
        assert!(!is_supported(&json!({"oneOf": [{}]})));
        assert!(is_supported(&json!({"oneOf": [{}, {"type": "null"}]})));
        assert!(!is_supported(&json!({"type": "object", "required": ["a"]})));
        assert!(is_supported(&json!({"type": "integer", "enum": [1, 2.0], "const": 2})));
        assert!(!is_supported(&json!({"type": "integer", "enum": [1.5]})));
        assert!(!is_supported(&json!({"type": "string", "const": "a", "enum": ["b"]})));
        assert!(!is_supported(&json!({"type": "string", "description": 3})));
        assert!(!is_supported(&json!({"items": {}})));
    }
}
