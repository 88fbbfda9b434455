//! Unit tests of [`super::ArgumentCheck`]: the constraints lowering drops are enforced with paths, the
//! keywords `jsonschema` would not enforce are made enforceable or refused, and depth stays bounded.
#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::{ArgumentCheck, MAX_ARGUMENT_DEPTH};

fn violations(schema: serde_json::Value, args: serde_json::Value) -> Vec<String> {
    ArgumentCheck::new(&schema).expect("check builds").violations(&args)
}

#[test]
fn dropped_constraints_are_enforced_with_their_path() {
    let schema = json!({
        "type": "object",
        "properties": {
            "tags": { "type": "array", "items": { "type": "string", "pattern": "^[a-z]+$" }, "maxItems": 2 },
            "filter": { "type": "object", "properties": { "city": { "type": "string", "minLength": 2 } }, "required": ["city"] },
        },
    });
    assert_eq!(violations(schema.clone(), json!({ "tags": ["ok", "NO"] })), [r#""tags[1]" does not match "^[a-z]+$""#]);
    assert_eq!(violations(schema.clone(), json!({ "filter": {} })), [r#"missing required property "filter.city""#]);
    assert_eq!(violations(schema, json!({ "filter": { "city": "x" } })), [r#""filter.city" is shorter than 2 characters"#]);
}

#[test]
fn root_violations_name_the_arguments() {
    assert_eq!(violations(json!({ "type": "object" }), json!("text")), [r#"arguments is not of type "object""#]);
}

#[test]
fn integer_formats_become_bounds_and_keep_tighter_ones() {
    let schema = json!({ "type": "object", "properties": {
        "small": { "type": "integer", "format": "uint8" },
        "count": { "type": "integer", "format": "uint32", "minimum": 1 },
    }});
    assert_eq!(violations(schema.clone(), json!({ "small": 256 })), [r#""small" is greater than the maximum of 255"#]);
    assert_eq!(violations(schema.clone(), json!({ "count": 0 })), [r#""count" is less than the minimum of 1"#]);
    assert!(violations(schema, json!({ "small": 255, "count": 1 })).is_empty());
}

#[test]
fn string_formats_are_asserted() {
    let schema = json!({ "type": "object", "properties": { "id": { "type": "string", "format": "uuid" }, "c": { "type": "string", "format": "char" } } });
    assert_eq!(violations(schema.clone(), json!({ "id": "nope" })), [r#""id" is not a "uuid""#]);
    assert_eq!(violations(schema, json!({ "c": "ab" })), [r#""c" is not a "char""#]);
}

#[test]
fn nullable_admits_null_as_the_lowered_schema_does() {
    let schema = json!({ "type": "object", "properties": { "note": { "type": "string", "nullable": true } } });
    assert!(violations(schema, json!({ "note": null })).is_empty());
}

#[test]
fn unknown_formats_and_bad_patterns_are_refused_with_the_reason() {
    let error = ArgumentCheck::new(&json!({ "type": "object", "properties": { "x": { "type": "string", "format": "postcode" } } })).unwrap_err();
    assert_eq!(error.path, "/properties/x/format");
    assert!(error.to_string().contains(r#"unknown format "postcode" cannot be enforced"#), "{error}");
    let error = ArgumentCheck::new(&json!({ "type": "string", "pattern": "(" })).unwrap_err();
    assert!(error.to_string().starts_with("cannot check arguments against the schema at"), "{error}");
}

#[test]
fn depth_is_bounded_without_recursion() {
    let mut deep = json!(1);
    for _ in 0..(MAX_ARGUMENT_DEPTH + 1) {
        deep = json!([deep]);
    }
    let check = ArgumentCheck::new(&json!({ "type": "object" })).expect("check builds");
    assert_eq!(check.violations(&json!({ "x": deep })), [format!("the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels")]);
    let mut schema = json!({});
    for _ in 0..300 {
        schema = json!({ "items": schema });
    }
    assert!(ArgumentCheck::new(&schema).unwrap_err().reason.contains("deeper than 256"));
}
