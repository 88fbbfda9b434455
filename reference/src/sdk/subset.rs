//! The enforced JSON Schema subset, as a yes/no verdict: the SDK renderers render a schema only when
//! the whole tree belongs to it and degrade it whole otherwise (TypeScript `unknown`, Python `Any`).
//! The subset: any JSON root object; annotation-only schemas; one scalar `type`; object
//! `properties`/`required`/boolean `additionalProperties`; array `items`; type-correct scalar
//! `enum`/`const`; `oneOf` with at least two branches. Walked with an explicit stack.

use serde_json::{Map, Value};

use super::js;

const SCALAR_TYPES: [&str; 5] = ["string", "number", "integer", "boolean", "null"];

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

/// The keywords of one schema node, read in a single pass over its entries (no hashing).
#[derive(Default, Clone, Copy)]
pub(crate) struct Keywords<'a> {
    pub(crate) ty: Option<&'a Value>,
    pub(crate) one_of: Option<&'a Value>,
    pub(crate) properties: Option<&'a Value>,
    pub(crate) required: Option<&'a Value>,
    pub(crate) additional_properties: Option<&'a Value>,
    pub(crate) items: Option<&'a Value>,
    pub(crate) enumeration: Option<&'a Value>,
    pub(crate) constant: Option<&'a Value>,
    pub(crate) description: Option<&'a Value>,
    /// A key outside the subset, or an annotation of the wrong kind.
    pub(crate) foreign: bool,
}

impl<'a> Keywords<'a> {
    pub(crate) fn of(map: &'a Map<String, Value>) -> Self {
        let mut k = Keywords::default();
        for (key, value) in map {
            match key.as_str() {
                "type" => k.ty = Some(value),
                "oneOf" => k.one_of = Some(value),
                "properties" => k.properties = Some(value),
                "required" => k.required = Some(value),
                "additionalProperties" => k.additional_properties = Some(value),
                "items" => k.items = Some(value),
                "enum" => k.enumeration = Some(value),
                "const" => k.constant = Some(value),
                "description" => {
                    k.description = Some(value);
                    k.foreign |= !value.is_string();
                }
                "title" => k.foreign |= !value.is_string(),
                "default" | "examples" => k.foreign |= !is_lossless(value),
                _ => k.foreign = true,
            }
        }
        k
    }

    /// `additionalProperties` is not literally `false`.
    pub(crate) fn open(&self) -> bool {
        !matches!(self.additional_properties, Some(Value::Bool(false)))
    }

    fn has_one_of_sibling(&self) -> bool {
        self.properties.is_some()
            || self.required.is_some()
            || self.additional_properties.is_some()
            || self.items.is_some()
            || self.enumeration.is_some()
            || self.constant.is_some()
    }
}

/// The names listed in `required` (non-strings ignored), searchable in O(1) when there are many.
pub(crate) enum Required<'a> {
    Few(Vec<&'a str>),
    Many(std::collections::HashSet<&'a str>),
}

impl<'a> Required<'a> {
    pub(crate) fn of(k: &Keywords<'a>) -> Self {
        let names = match k.required {
            Some(Value::Array(names)) => names.as_slice(),
            _ => &[],
        };
        let iter = names.iter().filter_map(Value::as_str);
        if names.len() <= 16 { Required::Few(iter.collect()) } else { Required::Many(iter.collect()) }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        match self {
            Required::Few(names) => names.contains(&name),
            Required::Many(names) => names.contains(name),
        }
    }
}

fn scalar_node_ok(ty: &str, k: &Keywords<'_>) -> bool {
    let enum_valid = match k.enumeration {
        None => None,
        Some(Value::Array(items)) if !items.is_empty() && items.iter().all(|v| scalar_matches(ty, v)) => Some(items),
        Some(_) => return false,
    };
    match k.constant {
        None => true,
        Some(value) => {
            scalar_matches(ty, value) && enum_valid.is_none_or(|items| items.iter().any(|item| same_scalar(item, value)))
        }
    }
}

/// A schema that belongs to the subset, with every node's keywords and subtree size in render
/// (pre-)order, so the renderers read each node once and can skip a degraded subtree.
pub(crate) struct Analysis<'a> {
    pub(crate) keys: Vec<Keywords<'a>>,
    /// Nodes in each node's subtree, itself included.
    pub(crate) sizes: Vec<usize>,
}

/// Whether `root` belongs to the enforced subset.
#[cfg(test)]
pub(crate) fn is_supported(root: &Value) -> bool {
    analyze(root).is_some()
}

/// `Some` when `root` belongs to the enforced subset. Children are visited in render order: `oneOf`
/// branches, `items`, properties in `Object.entries` order.
pub(crate) fn analyze(root: &Value) -> Option<Analysis<'_>> {
    let mut keys: Vec<Keywords<'_>> = Vec::new();
    let mut parents: Vec<usize> = Vec::new();
    let mut stack: Vec<(&Value, usize)> = vec![(root, usize::MAX)];
    while let Some((node, parent)) = stack.pop() {
        let Value::Object(map) = node else { return None };
        let k = Keywords::of(map);
        if k.foreign {
            return None;
        }
        let id = keys.len();
        keys.push(k);
        parents.push(parent);
        match (k.ty, k.one_of) {
            (Some(_), Some(_)) => return None,
            (None, None) => {
                if k.has_one_of_sibling() {
                    return None;
                }
            }
            (None, Some(branches)) => {
                if k.has_one_of_sibling() {
                    return None;
                }
                match branches {
                    Value::Array(items) if items.len() >= 2 => stack.extend(items.iter().rev().map(|v| (v, id))),
                    _ => return None,
                }
            }
            (Some(ty), None) => {
                let ty = ty.as_str()?;
                match ty {
                    "object" => {
                        if k.items.is_some() || k.enumeration.is_some() || k.constant.is_some() {
                            return None;
                        }
                        if !matches!(k.additional_properties, None | Some(Value::Bool(_))) {
                            return None;
                        }
                        let properties = match k.properties {
                            None => None,
                            Some(Value::Object(properties)) => Some(properties),
                            Some(_) => return None,
                        };
                        if let Some(required) = k.required {
                            let Value::Array(names) = required else { return None };
                            for name in names {
                                let Value::String(name) = name else { return None };
                                if !properties.is_some_and(|p| p.contains_key(name)) {
                                    return None;
                                }
                            }
                        }
                        if let Some(properties) = properties {
                            stack.extend(js::entries(properties).into_iter().rev().map(|(_, v)| (v, id)));
                        }
                    }
                    "array" => {
                        if k.properties.is_some()
                            || k.required.is_some()
                            || k.additional_properties.is_some()
                            || k.enumeration.is_some()
                            || k.constant.is_some()
                        {
                            return None;
                        }
                        if let Some(items) = k.items {
                            stack.push((items, id));
                        }
                    }
                    _ if SCALAR_TYPES.contains(&ty) => {
                        if k.properties.is_some() || k.required.is_some() || k.additional_properties.is_some() || k.items.is_some() {
                            return None;
                        }
                        if !scalar_node_ok(ty, &k) {
                            return None;
                        }
                    }
                    _ => return None,
                }
            }
        }
    }
    let mut sizes = vec![1usize; keys.len()];
    for id in (1..keys.len()).rev() {
        let size = sizes[id];
        if let Some(parent) = sizes.get_mut(parents[id]) {
            *parent += size;
        }
    }
    Some(Analysis { keys, sizes })
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
