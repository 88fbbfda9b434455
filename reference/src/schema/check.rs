//! The enforced raw JSON Schema subset (upstream `assertSupportedJsonSchema`): every violation of a raw
//! schema, in upstream's walk order, with upstream's exact texts. Used for output declarations at
//! registration and for the result of DSL compilation.
//!
//! Walks with an explicit task stack.
//!
//! Also the object-root assertion callers that need structured objects apply (upstream
//! `assertObjectJsonSchema`).
//!
//! Spec: REG-007, REG-010, SCHEMA-005, SCHEMA-019..SCHEMA-026, SCHEMA-031, SCHEMA-033, SCHEMA-034.

use serde_json::Value;

use super::path::{PathId, Paths, ROOT, Seg};
use crate::error::JsonSchemaError;
use crate::value::{is_json_integer, is_json_number, is_lossless, js_scalar_eq};

pub(crate) const SCHEMA_TYPES: [&str; 7] = ["object", "array", "string", "number", "integer", "boolean", "null"];
const SCALAR_TYPES: [&str; 5] = ["string", "number", "integer", "boolean", "null"];

/// Whether a JSON value is valid for one scalar schema type.
pub(crate) fn scalar_matches(ty: &str, value: &Value) -> bool {
    match (ty, value) {
        ("string", Value::String(_)) => true,
        ("number", Value::Number(n)) => is_json_number(n),
        ("integer", Value::Number(n)) => is_json_integer(n),
        ("boolean", Value::Bool(_)) => true,
        ("null", Value::Null) => true,
        _ => false,
    }
}

enum Task<'a> {
    Enter(&'a Value, PathId),
    OneOfTail(Keys<'a>, PathId),
    ObjectTail(Keys<'a>, PathId),
}

/// A schema node's keywords, read in one pass over its members (no lookup by name: a 100,000-level schema
/// is checked on every `schema/validate`, and hashing each keyword per node was most of the walk).
#[derive(Clone, Copy, Default)]
struct Keys<'a> {
    ty: Option<&'a Value>,
    one_of: Option<&'a Value>,
    properties: Option<&'a Value>,
    required: Option<&'a Value>,
    additional: Option<&'a Value>,
    items: Option<&'a Value>,
    allowed: Option<&'a Value>,
    constant: Option<&'a Value>,
    description: Option<&'a Value>,
    title: Option<&'a Value>,
}

/// What a member name is to the subset.
enum Kind {
    Constraint,
    Annotation,
    Unsupported,
}

impl<'a> Keys<'a> {
    /// Records `key`'s value if it is a keyword of the subset, and says what it is.
    fn note(&mut self, key: &str, value: &'a Value) -> Kind {
        let slot = match key.as_bytes() {
            b"type" => &mut self.ty,
            b"oneOf" => &mut self.one_of,
            b"properties" => &mut self.properties,
            b"required" => &mut self.required,
            b"additionalProperties" => &mut self.additional,
            b"items" => &mut self.items,
            b"enum" => &mut self.allowed,
            b"const" => &mut self.constant,
            b"description" => {
                self.description = Some(value);
                return Kind::Annotation;
            }
            b"title" => {
                self.title = Some(value);
                return Kind::Annotation;
            }
            b"default" | b"examples" => return Kind::Annotation,
            _ => return Kind::Unsupported,
        };
        *slot = Some(value);
        Kind::Constraint
    }

    /// The keywords allowed only beside `type` (and, under `oneOf`, not at all), in the order upstream
    /// reports them: `(name, present)`.
    fn siblings(&self) -> [(&'static str, bool); 6] {
        [
            ("properties", self.properties.is_some()),
            ("required", self.required.is_some()),
            ("additionalProperties", self.additional.is_some()),
            ("items", self.items.is_some()),
            ("enum", self.allowed.is_some()),
            ("const", self.constant.is_some()),
        ]
    }
}

/// Collect every subset violation of `schema` (rooted at the path `schema`).
pub(crate) fn schema_violations(schema: &Value) -> Vec<String> {
    let mut violations = Vec::new();
    let mut paths = Paths::new("schema");
    let mut tasks = vec![Task::Enter(schema, ROOT)];
    while let Some(task) = tasks.pop() {
        let (node, path) = match task {
            Task::OneOfTail(keys, path) => {
                for (key, present) in keys.siblings() {
                    if present {
                        violations.push(format!("{}.{key} is not supported beside oneOf", paths.render(path)));
                    }
                }
                continue;
            }
            Task::ObjectTail(keys, path) => {
                object_tail(&keys, &paths, path, &mut violations);
                continue;
            }
            Task::Enter(node, path) => (node, path),
        };
        let Value::Object(node) = node else {
            violations.push(format!("{} must be a schema object", paths.render(path)));
            continue;
        };
        let mut keys = Keys::default();
        for (key, value) in node {
            match keys.note(key, value) {
                Kind::Constraint => {}
                Kind::Annotation => {
                    // Annotations are JSON by construction here; only a negative zero is not lossless (SCHEMA-025).
                    if !is_lossless(value) {
                        violations.push(format!("{}.{key} annotation must be lossless JSON data", paths.render(path)));
                    }
                }
                Kind::Unsupported => violations.push(format!(
                    "{}.{key} is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)",
                    paths.render(path)
                )),
            }
        }
        if keys.description.is_some_and(|d| !d.is_string()) {
            violations.push(format!("{}.description must be a string", paths.render(path)));
        }
        if keys.title.is_some_and(|d| !d.is_string()) {
            violations.push(format!("{}.title must be a string", paths.render(path)));
        }
        let has_type = keys.ty.is_some();
        if has_type && keys.one_of.is_some() {
            violations.push(format!("{} cannot declare both type and oneOf", paths.render(path)));
            continue;
        }
        if !has_type && keys.one_of.is_none() {
            for (key, present) in keys.siblings() {
                if present {
                    violations.push(format!("{}.{key} requires type or oneOf", paths.render(path)));
                }
            }
            continue;
        }
        if let Some(one_of) = keys.one_of {
            tasks.push(Task::OneOfTail(keys, path));
            match one_of {
                Value::Array(branches) if branches.len() >= 2 => {
                    for (index, branch) in branches.iter().enumerate().rev() {
                        let child = paths.push(path, Seg::OneOf(index));
                        tasks.push(Task::Enter(branch, child));
                    }
                }
                _ => violations.push(format!("{}.oneOf must be an array of at least two schemas", paths.render(path))),
            }
            continue;
        }
        let ty = match keys.ty {
            Some(Value::String(t)) if SCHEMA_TYPES.contains(&t.as_str()) => t.as_str(),
            Some(Value::Array(_)) => {
                violations.push(format!(
                    "{}.type must be a single type string (type arrays are not supported)",
                    paths.render(path)
                ));
                continue;
            }
            _ => {
                violations.push(format!("{}.type must be one of {}", paths.render(path), SCHEMA_TYPES.join("/")));
                continue;
            }
        };
        let allowed_for: [&[&str]; 6] = [&["object"], &["object"], &["object"], &["array"], &SCALAR_TYPES, &SCALAR_TYPES];
        for ((key, present), types) in keys.siblings().into_iter().zip(allowed_for) {
            if present && !types.contains(&ty) {
                violations.push(format!("{}.{key} is not supported on type \"{ty}\"", paths.render(path)));
            }
        }
        match ty {
            "object" => {
                tasks.push(Task::ObjectTail(keys, path));
                if let Some(properties) = keys.properties {
                    match properties {
                        Value::Object(props) => {
                            for (key, child) in props.iter().rev() {
                                let child_path = paths.push(path, Seg::Property(key));
                                tasks.push(Task::Enter(child, child_path));
                            }
                        }
                        _ => violations.push(format!("{}.properties must be an object of schemas", paths.render(path))),
                    }
                }
            }
            "array" => {
                if let Some(items) = keys.items {
                    let child = paths.push(path, Seg::Dot("items"));
                    tasks.push(Task::Enter(items, child));
                }
            }
            _ => scalar_node(&keys, ty, &paths, path, &mut violations),
        }
    }
    violations
}

/// Object-only fields, checked after the property schemas were visited.
fn object_tail(keys: &Keys<'_>, paths: &Paths<'_>, path: PathId, violations: &mut Vec<String>) {
    if let Some(required) = keys.required {
        match required {
            Value::Array(names) if names.iter().all(Value::is_string) => {
                let declared = match keys.properties {
                    Some(Value::Object(props)) => Some(props),
                    _ => None,
                };
                for name in names.iter().filter_map(Value::as_str) {
                    if !declared.is_some_and(|d| d.contains_key(name)) {
                        violations.push(format!(
                            "{}.required names \"{name}\" which is not in properties",
                            paths.render(path)
                        ));
                    }
                }
            }
            _ => violations.push(format!("{}.required must be an array of strings", paths.render(path))),
        }
    }
    if keys.additional.is_some_and(|a| !a.is_boolean()) {
        violations.push(format!("{}.additionalProperties must be a boolean", paths.render(path)));
    }
}

/// `enum` / `const` on a scalar node.
fn scalar_node(keys: &Keys<'_>, ty: &str, paths: &Paths<'_>, path: PathId, violations: &mut Vec<String>) {
    let allowed = keys.allowed;
    let enum_valid = match allowed {
        Some(Value::Array(entries)) => !entries.is_empty() && entries.iter().all(|e| scalar_matches(ty, e)),
        _ => false,
    };
    if allowed.is_some() && !enum_valid {
        violations.push(format!("{}.enum must be a non-empty array of {ty} values", paths.render(path)));
    }
    if let Some(declared) = keys.constant {
        if !scalar_matches(ty, declared) {
            violations.push(format!("{}.const must be a {ty} value", paths.render(path)));
        } else if enum_valid {
            let listed = match allowed {
                Some(Value::Array(entries)) => entries.iter().any(|e| js_scalar_eq(e, declared)),
                _ => true,
            };
            if !listed {
                let rendered = paths.render(path);
                violations.push(format!("{rendered}.const must be one of {rendered}.enum when both are declared"));
            }
        }
    }
}

/// Assert the subset, failing with every violation.
pub fn assert_supported_json_schema(schema: &Value) -> Result<(), JsonSchemaError> {
    let violations = schema_violations(schema);
    if violations.is_empty() { Ok(()) } else { Err(JsonSchemaError::new(violations)) }
}

/// The one violation [`assert_object_json_schema`] adds for a supported schema whose root is not an object.
pub const OBJECT_ROOT_VIOLATION: &str = "schema.type must be \"object\" (structured output is object-rooted)";

/// Assert the subset and, when the schema is otherwise supported, an object root (`"type": "object"` on the
/// root node) — for callers such as structured-output consumers that require an object. A schema with subset
/// violations fails with those alone; an annotation-only, scalar, array or `oneOf` root fails with
/// [`OBJECT_ROOT_VIOLATION`].
///
/// ```
/// use dsh_tools::assert_object_json_schema;
/// use serde_json::json;
///
/// assert!(assert_object_json_schema(&json!({ "type": "object" })).is_ok());
/// let error = assert_object_json_schema(&json!({ "type": "string" })).unwrap_err();
/// assert_eq!(error.to_string(), "unsupported JSON schema: schema.type must be \"object\" (structured output is object-rooted)");
/// ```
pub fn assert_object_json_schema(schema: &Value) -> Result<(), JsonSchemaError> {
    assert_supported_json_schema(schema)?;
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        _ => Err(JsonSchemaError::new(vec![OBJECT_ROOT_VIOLATION.to_owned()])),
    }
}
