//! The `defineTool` schema DSL compiler (upstream `parameterSchemaSpecToJsonSchema` /
//! `valueSchemaSpecToJsonSchema`): author specs (`string`/`number`/`integer`/`boolean`/`null`/`array`/
//! `object`/`json`/`oneOf`, scalar `enum`/`const`, property-level `required: true`, explicit
//! `additionalProperties`) compile to the enforced raw subset with upstream's key order, then pass the
//! raw-subset assertion. The first author error stops compilation, with upstream's exact text.
//!
//! Runs as a task graph over an explicit stack and assembles the output bottom-up, never recursing.
//!
//! Spec: ARG-004, ARG-015, REG-007, SCHEMA-001..SCHEMA-003, SCHEMA-005..SCHEMA-007, SCHEMA-010, SCHEMA-013..SCHEMA-016, SCHEMA-031, SCHEMA-033.

use serde_json::Value;

use super::check::assert_supported_json_schema;
use super::path::{PathId, Paths, ROOT, Seg};
use crate::error::JsonSchemaError;
use crate::value::{TreeBuilder, deep_clone};

const ANNOTATION_KEYS: [&str; 4] = ["description", "title", "default", "examples"];

#[derive(Clone, Copy)]
enum Dest<'a> {
    Root,
    Property { props: usize, key: &'a str },
    Item { node: usize },
    OneOf { branches: usize },
}

enum Task<'a> {
    Value { input: &'a Value, path: PathId, allow_required: bool, dest: Dest<'a> },
    PropertyMap { input: &'a Value, path: PathId, object: usize },
    Property { property: &'a Value, key: &'a str, path: PathId, props: usize, required: usize },
    PropertyMapTail { required: usize, object: usize },
}

fn author<T>(message: String) -> Result<T, JsonSchemaError> {
    Err(JsonSchemaError::new(vec![message]))
}

/// Compile an implicit parameter map (`{ name: spec, ... }`) to an object-rooted raw schema.
pub fn parameter_spec_to_json_schema(spec: &Value) -> Result<Value, JsonSchemaError> {
    let mut paths = Paths::new("parameters");
    let mut tree = TreeBuilder::new();
    let root = tree.object();
    tree.set_leaf(root, "type", Value::String("object".into()));
    run(&mut tree, &mut paths, Task::PropertyMap { input: spec, path: ROOT, object: root })?;
    checked(tree.finish())
}

/// Compile a value spec (any JSON root) to a raw schema.
pub fn value_spec_to_json_schema(spec: &Value) -> Result<Value, JsonSchemaError> {
    let mut paths = Paths::new("schema");
    let mut tree = TreeBuilder::new();
    run(&mut tree, &mut paths, Task::Value { input: spec, path: ROOT, allow_required: false, dest: Dest::Root })?;
    checked(tree.finish())
}

/// Assert the compiled schema, dropping a rejected (possibly deep) one without recursion.
fn checked(schema: Value) -> Result<Value, JsonSchemaError> {
    match assert_supported_json_schema(&schema) {
        Ok(()) => Ok(schema),
        Err(error) => {
            crate::value::dismantle(schema);
            Err(error)
        }
    }
}

fn check_keys(
    input: &serde_json::Map<String, Value>,
    paths: &Paths<'_>,
    path: PathId,
    allow_required: bool,
    extra: &[&str],
) -> Result<(), JsonSchemaError> {
    for key in input.keys() {
        let k = key.as_str();
        let allowed = ANNOTATION_KEYS.contains(&k) || (allow_required && k == "required") || extra.contains(&k);
        if !allowed {
            return author(format!("{}.{key} is not supported by the value schema DSL", paths.render(path)));
        }
    }
    Ok(())
}

fn copy_annotations(input: &serde_json::Map<String, Value>, tree: &mut TreeBuilder, node: usize) {
    for key in ANNOTATION_KEYS {
        if let Some(v) = input.get(key) {
            tree.set_leaf(node, key, deep_clone(v));
        }
    }
}

fn run<'a>(tree: &mut TreeBuilder, paths: &mut Paths<'a>, initial: Task<'a>) -> Result<(), JsonSchemaError> {
    let mut required_lists: Vec<Vec<&'a str>> = Vec::new();
    let mut tasks = vec![initial];
    while let Some(task) = tasks.pop() {
        match task {
            Task::PropertyMapTail { required, object } => {
                let names = required_lists.get(required).cloned().unwrap_or_default();
                if !names.is_empty() {
                    let values = names.into_iter().map(|n| Value::String(n.to_owned())).collect();
                    tree.set_leaf(object, "required", Value::Array(values));
                }
            }
            Task::Property { property, key, path, props, required } => {
                let Value::Object(map) = property else {
                    return author(format!("{} must be a value schema object", paths.render(path)));
                };
                if let Some(flag) = map.get("required") {
                    if flag != &Value::Bool(true) {
                        return author(format!("{}.required must be true when present", paths.render(path)));
                    }
                    if let Some(list) = required_lists.get_mut(required) {
                        list.push(key);
                    }
                }
                tasks.push(Task::Value {
                    input: property,
                    path,
                    allow_required: true,
                    dest: Dest::Property { props, key },
                });
            }
            Task::PropertyMap { input, path, object } => {
                let Value::Object(map) = input else {
                    return author(format!("{} must be an object of value schemas", paths.render(path)));
                };
                let props = tree.object();
                tree.set_node(object, "properties", props);
                required_lists.push(Vec::new());
                let required = required_lists.len() - 1;
                tasks.push(Task::PropertyMapTail { required, object });
                let entries: Vec<_> = map.iter().collect();
                for (key, property) in entries.into_iter().rev() {
                    let child = paths.push(path, Seg::Key(key));
                    tasks.push(Task::Property { property, key, path: child, props, required });
                }
            }
            Task::Value { input, path, allow_required, dest } => {
                let Value::Object(map) = input else {
                    return author(format!("{} must be a value schema object", paths.render(path)));
                };
                let node = tree.object();
                match dest {
                    Dest::Root => {}
                    Dest::Property { props, key } => tree.set_node(props, key, node),
                    Dest::Item { node: parent } => tree.set_node(parent, "items", node),
                    Dest::OneOf { branches } => tree.push_node(branches, node),
                }
                if let Some(one_of) = map.get("oneOf") {
                    check_keys(map, paths, path, allow_required, &["oneOf", "type"])?;
                    if map.contains_key("type") {
                        return author(format!("{} cannot declare both type and oneOf", paths.render(path)));
                    }
                    let Value::Array(branches) = one_of else {
                        return author(format!(
                            "{}.oneOf must be an array of at least two value schemas",
                            paths.render(path)
                        ));
                    };
                    let list = tree.array();
                    tree.set_node(node, "oneOf", list);
                    copy_annotations(map, tree, node);
                    for (index, branch) in branches.iter().enumerate().rev() {
                        let child = paths.push(path, Seg::OneOf(index));
                        tasks.push(Task::Value {
                            input: branch,
                            path: child,
                            allow_required: false,
                            dest: Dest::OneOf { branches: list },
                        });
                    }
                    continue;
                }
                let ty = match map.get("type") {
                    Some(Value::String(t)) => t.as_str(),
                    _ => "",
                };
                match ty {
                    "json" => {
                        check_keys(map, paths, path, allow_required, &["type"])?;
                        copy_annotations(map, tree, node);
                    }
                    "object" => {
                        check_keys(map, paths, path, allow_required, &["type", "properties", "additionalProperties"])?;
                        let Some(Value::Bool(open)) = map.get("additionalProperties") else {
                            return author(format!(
                                "{}.additionalProperties must be explicitly true or false",
                                paths.render(path)
                            ));
                        };
                        tree.set_leaf(node, "type", Value::String("object".into()));
                        copy_annotations(map, tree, node);
                        tree.set_leaf(node, "additionalProperties", Value::Bool(*open));
                        if let Some(properties) = map.get("properties") {
                            let child = paths.push(path, Seg::Dot("properties"));
                            tasks.push(Task::PropertyMap { input: properties, path: child, object: node });
                        }
                    }
                    "array" => {
                        check_keys(map, paths, path, allow_required, &["type", "items"])?;
                        tree.set_leaf(node, "type", Value::String("array".into()));
                        copy_annotations(map, tree, node);
                        if let Some(items) = map.get("items") {
                            let child = paths.push(path, Seg::Dot("items"));
                            tasks.push(Task::Value {
                                input: items,
                                path: child,
                                allow_required: false,
                                dest: Dest::Item { node },
                            });
                        }
                    }
                    "string" | "number" | "integer" | "boolean" | "null" => {
                        check_keys(map, paths, path, allow_required, &["type", "enum", "const"])?;
                        tree.set_leaf(node, "type", Value::String(ty.to_owned()));
                        copy_annotations(map, tree, node);
                        if let Some(allowed) = map.get("enum") {
                            if !allowed.is_array() {
                                return author(format!(
                                    "{}.enum must be a non-empty array of scalar values",
                                    paths.render(path)
                                ));
                            }
                            tree.set_leaf(node, "enum", deep_clone(allowed));
                        }
                        if let Some(c) = map.get("const") {
                            tree.set_leaf(node, "const", deep_clone(c));
                        }
                    }
                    _ => {
                        return author(format!(
                            "{}.type must be string/number/integer/boolean/null/array/object/json, or use oneOf",
                            paths.render(path)
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compiles_with_upstream_key_order() {
        let got = parameter_spec_to_json_schema(&json!({
            "a": {"type":"string","required":true,"description":"x"},
            "b": {"type":"object","additionalProperties":false,"properties":{"c":{"type":"number","required":true}}}
        }));
        let expected = r#"{"type":"object","properties":{"a":{"type":"string","description":"x"},"b":{"type":"object","additionalProperties":false,"properties":{"c":{"type":"number"}},"required":["c"]}},"required":["a"]}"#;
        assert_eq!(got.map(|v| v.to_string()).ok().as_deref(), Some(expected));
        let got = value_spec_to_json_schema(&json!({"oneOf":[{"type":"null"},{"type":"array","items":{"type":"json","description":"j"}}],"description":"x"}));
        let expected = r#"{"oneOf":[{"type":"null"},{"type":"array","items":{"description":"j"}}],"description":"x"}"#;
        assert_eq!(got.map(|v| v.to_string()).ok().as_deref(), Some(expected));
    }

    #[test]
    fn first_author_error_wins() {
        let err = parameter_spec_to_json_schema(&json!({"a":{"type":"x"},"b":{"type":"y"}})).err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some(
                "unsupported JSON schema: parameters.a.type must be string/number/integer/boolean/null/array/object/json, or use oneOf"
            )
        );
        let err = value_spec_to_json_schema(&json!({"oneOf":[{"type":"null"}]})).err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some("unsupported JSON schema: schema.oneOf must be an array of at least two schemas")
        );
    }
}
