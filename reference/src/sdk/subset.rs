//! The enforced JSON Schema subset, as a yes/no verdict: the SDK renderers render a schema only when
//! the whole tree belongs to it and degrade it whole otherwise (TypeScript `unknown`, Python `Any`).
//! The same single pass ([`Analysis`]) records what rendering needs, so the renderers never read a
//! schema's keys again: keywords, subtree sizes, properties in `Object.entries` order, and the
//! TypeScript union flags that decide array parentheses.
//! The subset: any JSON root object; annotation-only schemas; one scalar `type`; object
//! `properties`/`required`/boolean `additionalProperties`; array `items`; type-correct scalar
//! `enum`/`const`; `oneOf` with at least two branches. Walked with an explicit stack.
//!
//! Spec: SDK-015 and SDK-019 (what degrades: SCHEMA-019..025 restated as a verdict), SDK-013 (union
//! flags), SDK-014 (property order).

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
            // Byte patterns compile to a length switch and inline compares.
            match key.as_bytes() {
                b"type" => k.ty = Some(value),
                b"oneOf" => k.one_of = Some(value),
                b"properties" => k.properties = Some(value),
                b"required" => k.required = Some(value),
                b"additionalProperties" => k.additional_properties = Some(value),
                b"items" => k.items = Some(value),
                b"enum" => k.enumeration = Some(value),
                b"const" => k.constant = Some(value),
                b"description" => {
                    k.description = Some(value);
                    k.foreign |= !value.is_string();
                }
                b"title" => k.foreign |= !value.is_string(),
                b"default" | b"examples" => k.foreign |= !is_lossless(value),
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
    Few(&'a [Value]),
    Many(std::collections::HashSet<&'a str>),
}

impl<'a> Required<'a> {
    pub(crate) fn of(k: &Keywords<'a>) -> Self {
        let names = match k.required {
            Some(Value::Array(names)) => names.as_slice(),
            _ => &[],
        };
        if names.len() <= 16 { Required::Few(names) } else { Required::Many(names.iter().filter_map(Value::as_str).collect()) }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        match self {
            Required::Few(names) => names.iter().any(|n| n.as_str() == Some(name)),
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

fn has_bar_or_amp(s: &str) -> bool {
    s.bytes().any(|b| b == b'|' || b == b'&')
}

/// How a node hangs from its parent.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    Root,
    Branch,
    Items,
    Property,
}

/// One schema that belongs to the subset, read once: every node's keywords, subtree size, properties
/// and (when asked for) TypeScript union flag, in render (pre-)order. Node 0 is the root; a node's
/// children are the next ids, each after the previous child's subtree. The buffers are reused by the
/// next [`Analysis::analyze`], so one render allocates them once.
#[derive(Default)]
pub(crate) struct Analysis<'a> {
    pub(crate) keys: Vec<Keywords<'a>>,
    /// Nodes in each node's subtree, itself included.
    pub(crate) sizes: Vec<usize>,
    /// Each node's properties as a range of `props` (empty unless an object with properties).
    pub(crate) prop_ranges: Vec<(usize, usize)>,
    /// Properties in `Object.entries` order, object by object.
    pub(crate) props: Vec<(&'a str, &'a Value)>,
    /// Whether the node's TypeScript text contains `|` or `&` (filled when asked for).
    pub(crate) bars: Vec<bool>,
    parents: Vec<usize>,
    stack: Vec<(&'a Value, usize, Edge)>,
    indexed: Vec<(u32, &'a str, &'a Value)>,
}

impl<'a> Analysis<'a> {
    /// Whether `root` belongs to the enforced subset; when it does, the fields describe it. `bars`
    /// asks for the TypeScript union flags: a node's own text holds `|` or `&` when it is a `oneOf`, a
    /// multi-member enum, a string literal holding one, or an object that is open or has such a
    /// property name or property description; a node's flag also covers its subtree.
    pub(crate) fn analyze(&mut self, root: &'a Value, bars: bool) -> bool {
        self.keys.clear();
        self.sizes.clear();
        self.prop_ranges.clear();
        self.props.clear();
        self.bars.clear();
        self.parents.clear();
        self.stack.clear();
        self.stack.push((root, usize::MAX, Edge::Root));
        while let Some((node, parent, edge)) = self.stack.pop() {
            let Value::Object(map) = node else { return false };
            let k = Keywords::of(map);
            if k.foreign {
                return false;
            }
            let id = self.keys.len();
            self.keys.push(k);
            self.parents.push(parent);
            let start = self.props.len();
            let mut own_bar = false;
            match (k.ty, k.one_of) {
                (Some(_), Some(_)) => return false,
                (None, None) => {
                    if k.has_one_of_sibling() {
                        return false;
                    }
                }
                (None, Some(branches)) => {
                    if k.has_one_of_sibling() {
                        return false;
                    }
                    match branches {
                        Value::Array(items) if items.len() >= 2 => {
                            own_bar = true;
                            self.stack.extend(items.iter().rev().map(|v| (v, id, Edge::Branch)));
                        }
                        _ => return false,
                    }
                }
                (Some(ty), None) => {
                    let Some(ty) = ty.as_str() else { return false };
                    match ty {
                        "object" => {
                            if k.items.is_some() || k.enumeration.is_some() || k.constant.is_some() {
                                return false;
                            }
                            if !matches!(k.additional_properties, None | Some(Value::Bool(_))) {
                                return false;
                            }
                            let properties = match k.properties {
                                None => None,
                                Some(Value::Object(properties)) => Some(properties),
                                Some(_) => return false,
                            };
                            if let Some(properties) = properties.filter(|p| !p.is_empty()) {
                                self.push_entries(properties);
                            }
                            if let Some(required) = k.required {
                                let Value::Array(names) = required else { return false };
                                let declared = &self.props[start..];
                                for name in names {
                                    let Value::String(name) = name else { return false };
                                    // The keys were just read: a scan beats hashing for small objects.
                                    let found = if declared.len() <= 16 {
                                        declared.iter().any(|(key, _)| *key == name.as_str())
                                    } else {
                                        properties.is_some_and(|p| p.contains_key(name))
                                    };
                                    if !found {
                                        return false;
                                    }
                                }
                            }
                            if self.props.len() > start {
                                own_bar = k.open() || self.props[start..].iter().any(|(name, _)| has_bar_or_amp(name));
                                self.stack.extend(self.props[start..].iter().rev().map(|&(_, v)| (v, id, Edge::Property)));
                            }
                        }
                        "array" => {
                            if k.properties.is_some()
                                || k.required.is_some()
                                || k.additional_properties.is_some()
                                || k.enumeration.is_some()
                                || k.constant.is_some()
                            {
                                return false;
                            }
                            if let Some(items) = k.items {
                                self.stack.push((items, id, Edge::Items));
                            }
                        }
                        _ if SCALAR_TYPES.contains(&ty) => {
                            if k.properties.is_some() || k.required.is_some() || k.additional_properties.is_some() || k.items.is_some()
                            {
                                return false;
                            }
                            if !scalar_node_ok(ty, &k) {
                                return false;
                            }
                        }
                        _ => return false,
                    }
                }
            }
            self.prop_ranges.push((start, self.props.len()));
            if bars {
                if let Some(value) = k.constant {
                    own_bar |= value.as_str().is_some_and(has_bar_or_amp);
                } else if let Some(Value::Array(values)) = k.enumeration {
                    own_bar |= values.len() > 1 || values.iter().any(|v| v.as_str().is_some_and(has_bar_or_amp));
                }
                self.bars.push(own_bar);
                // A property's doc line is part of its object's text.
                if edge == Edge::Property && k.description.and_then(Value::as_str).is_some_and(has_bar_or_amp) {
                    if let Some(flag) = self.bars.get_mut(parent) {
                        *flag = true;
                    }
                }
            }
        }
        self.sizes.resize(self.keys.len(), 1);
        for id in (1..self.keys.len()).rev() {
            let parent = self.parents[id];
            let size = self.sizes[id];
            if let Some(total) = self.sizes.get_mut(parent) {
                *total += size;
            }
            if bars && self.bars[id] {
                if let Some(flag) = self.bars.get_mut(parent) {
                    *flag = true;
                }
            }
        }
        true
    }

    /// Append `map`'s entries to `props` in `Object.entries` order (array-index keys first, ascending).
    fn push_entries(&mut self, map: &'a Map<String, Value>) {
        let start = self.props.len();
        self.indexed.clear();
        for (key, value) in map {
            match js::array_index(key) {
                Some(index) => self.indexed.push((index, key.as_str(), value)),
                None => self.props.push((key.as_str(), value)),
            }
        }
        if !self.indexed.is_empty() {
            self.indexed.sort_unstable_by_key(|&(index, _, _)| index);
            self.props.splice(start..start, self.indexed.iter().map(|&(_, key, value)| (key, value)));
        }
    }

    /// The ids of node `id`'s first `count` children, in order.
    pub(crate) fn child_ids(&self, id: usize, count: usize) -> impl Iterator<Item = usize> + '_ {
        let mut next = id + 1;
        (0..count).map(move |_| {
            let child = next;
            next += self.sizes.get(child).copied().unwrap_or(1);
            child
        })
    }
}

/// Whether `root` belongs to the enforced subset.
#[cfg(test)]
pub(crate) fn is_supported(root: &Value) -> bool {
    Analysis::default().analyze(root, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn properties_in_object_entries_order() {
        let value: Value = serde_json::from_str(
            r#"{"type":"object","properties":{"b":{},"10":{},"a":{},"2":{},"01":{},"4294967295":{}},"required":["2"]}"#,
        )
        .unwrap_or(Value::Null);
        let mut analysis = Analysis::default();
        assert!(analysis.analyze(&value, false));
        let keys: Vec<&str> = analysis.props.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["2", "10", "b", "a", "01", "4294967295"]);
        assert_eq!(analysis.child_ids(0, 6).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn union_flags_cover_subtrees_keys_and_docs() {
        let value = json!({"type": "array", "items": {"type": "object", "additionalProperties": false, "properties": {
            "x": {"type": "string", "description": "a | b"}, "y": {"type": "array", "items": {"type": "string"}}}}});
        let mut analysis = Analysis::default();
        assert!(analysis.analyze(&value, true));
        assert_eq!(analysis.bars, [true, true, false, false, false]);
        assert_eq!(analysis.sizes, [5, 4, 1, 2, 1]);
    }

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
