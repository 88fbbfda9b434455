//! Unit tests of the lowering: each keyword family, the reports, the failures.

use serde_json::{Value, json};

use super::{LowerError, LoweringAction, lower_json_schema};
use crate::schema::check::assert_supported_json_schema;

fn lowered(schema: Value) -> (Value, Vec<String>) {
    let out = lower_json_schema(&schema).unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = assert_supported_json_schema(&out.schema) {
        panic!("lowered schema {} is outside the subset: {e}", out.schema);
    }
    (out.schema, out.changes.iter().map(ToString::to_string).collect())
}

fn error(schema: Value) -> LowerError {
    match lower_json_schema(&schema) {
        Ok(out) => panic!("expected a LowerError, got {}", out.schema),
        Err(e) => e,
    }
}

#[test]
fn subset_schema_is_unchanged_and_unreported() {
    let schema = json!({"type": "object", "title": "t", "properties": {"a": {"type": "string", "enum": ["x", "y"], "default": "x"}},
        "required": ["a"], "additionalProperties": false});
    let (out, changes) = lowered(schema.clone());
    assert_eq!(out, schema);
    assert!(changes.is_empty(), "{changes:?}");
}

#[test]
fn document_keywords_and_value_constraints_are_dropped_with_paths() {
    let (out, changes) = lowered(json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x", "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "exclusiveMaximum": 9},
                       "s": {"type": "string", "format": "uri", "minLength": 1, "pattern": "^h"},
                       "l": {"type": "array", "items": {"type": "number", "multipleOf": 2}, "minItems": 1, "uniqueItems": true}}}));
    assert_eq!(out, json!({"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"},
        "l": {"type": "array", "items": {"type": "number"}}}}));
    assert_eq!(changes, [
        "$: dropped `$schema`", "$: dropped `$id`", "$.properties.n: dropped `minimum`", "$.properties.n: dropped `exclusiveMaximum`",
        "$.properties.s: dropped `format`", "$.properties.s: dropped `minLength`", "$.properties.s: dropped `pattern`",
        "$.properties.l.items: dropped `multipleOf`", "$.properties.l: dropped `minItems`", "$.properties.l: dropped `uniqueItems`",
    ]);
}

#[test]
fn nullable_type_list_becomes_one_of() {
    let (out, changes) = lowered(json!({"type": ["string", "null"], "description": "d", "maxLength": 3}));
    assert_eq!(out, json!({"oneOf": [{"type": "string"}, {"type": "null"}], "description": "d"}));
    assert!(changes.iter().any(|c| c.contains("oneOf of one branch per type")), "{changes:?}");
    assert_eq!(changes.iter().filter(|c| c.contains("maxLength")).count(), 1, "reported once: {changes:?}");
    let (out, _) = lowered(json!({"type": "integer", "nullable": true}));
    assert_eq!(out, json!({"oneOf": [{"type": "integer"}, {"type": "null"}]}));
    let (out, _) = lowered(json!({"type": ["integer", "number"]}));
    assert_eq!(out, json!({"type": "number"}));
    let (out, _) = lowered(json!({"type": ["string", "null"], "enum": ["a", null]}));
    assert_eq!(out, json!({"oneOf": [{"type": "string", "enum": ["a"]}, {"type": "null", "enum": [null]}]}));
}

#[test]
fn any_of_becomes_one_of_only_when_branches_are_disjoint() {
    let (out, changes) = lowered(json!({"anyOf": [{"type": "string"}, {"type": "null"}]}));
    assert_eq!(out, json!({"oneOf": [{"type": "string"}, {"type": "null"}]}));
    assert_eq!(changes, ["$: rewrote `anyOf`: became oneOf (its branches never accept the same value)"]);
    let (out, changes) = lowered(json!({"anyOf": [{"type": "integer"}, {"type": "number"}], "title": "t"}));
    assert_eq!(out, json!({"title": "t"}));
    assert_eq!(changes, ["$: dropped `anyOf`"]);
    let tagged = json!({"anyOf": [
        {"type": "object", "properties": {"k": {"const": "a"}, "x": {"type": "string"}}, "required": ["k"]},
        {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]}]});
    let (out, _) = lowered(tagged);
    assert!(out.get("oneOf").is_some(), "{out}");
    let (out, _) = lowered(json!({"anyOf": [{"type": "string"}]}));
    assert_eq!(out, json!({"type": "string"}));
}

#[test]
fn local_refs_are_inlined_and_defs_dropped() {
    let (out, changes) = lowered(json!({"type": "object", "properties": {
        "p": {"$ref": "#/$defs/Point", "description": "where"},
        "q": {"anyOf": [{"$ref": "#/definitions/Point"}, {"type": "null"}]}},
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
        "definitions": {"Point": {"$ref": "#/$defs/Point"}}}));
    let point = json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]});
    let mut described = point.clone();
    described["description"] = json!("where");
    assert_eq!(out["properties"]["p"], described);
    assert_eq!(out["properties"]["q"], json!({"oneOf": [point, {"type": "null"}]}));
    assert!(out.get("$defs").is_none() && out.get("definitions").is_none());
    assert!(changes.contains(&"$: dropped `$defs`".to_owned()), "{changes:?}");
    assert!(changes.contains(&"$.properties.p: rewrote `$ref`: inlined \"#/$defs/Point\"".to_owned()), "{changes:?}");
}

#[test]
fn ref_cycles_and_remote_refs_fail_naming_path_and_keyword() {
    let e = error(json!({"type": "object", "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}}));
    assert_eq!((e.path.as_str(), e.keyword.as_str()), ("$.properties.tree.properties.kids.items", "$ref"));
    assert!(e.reason.contains("#/$defs/Node -> #/$defs/Node"), "{e}");
    let e = error(json!({"$ref": "https://example.com/s.json"}));
    assert_eq!(e.keyword, "$ref");
    let e = error(json!({"properties": {"a": {"$ref": "#/$defs/missing"}}}));
    assert_eq!(e.path, "$.properties.a");
    let _: &dyn std::error::Error = &e;
}

#[test]
fn all_of_merges_and_type_is_inferred() {
    let (out, _) = lowered(json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer"}}, "required": ["b"]}]}));
    assert_eq!(out, json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a", "b"]}));
    let (out, _) = lowered(json!({"enum": ["a", 1, null]}));
    assert_eq!(out, json!({"oneOf": [{"type": "string", "enum": ["a"]}, {"type": "number", "enum": [1]}, {"type": "null", "enum": [null]}]}));
    let (out, _) = lowered(json!({"const": true}));
    assert_eq!(out, json!({"type": "boolean", "const": true}));
    let e = error(json!({"allOf": [{"type": "string"}, {"type": "number"}]}));
    assert_eq!((e.path.as_str(), e.keyword.as_str()), ("$", "type"));
}

#[test]
fn object_details_are_completed_into_the_subset() {
    let (out, changes) = lowered(json!({"type": "object", "required": ["a"], "additionalProperties": {"type": "string"},
        "properties": {"b": true}}));
    assert_eq!(out, json!({"type": "object", "required": ["a"], "additionalProperties": true, "properties": {"b": {}, "a": {}}}));
    assert!(changes.iter().any(|c| c.contains("`additionalProperties`")), "{changes:?}");
    let (out, _) = lowered(json!({"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": false}));
    assert_eq!(out, json!({"type": "object", "additionalProperties": true}));
}

#[test]
fn one_of_keeps_siblings_by_distributing_them() {
    let (out, _) = lowered(json!({"type": "object", "properties": {"a": {"type": "string"}},
        "oneOf": [{"required": ["a"]}, {"properties": {"b": {"type": "number"}}, "required": ["b"]}]}));
    assert_eq!(out, json!({"oneOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}, "required": ["b"]}]}));
}

#[test]
fn unsatisfiable_values_fail() {
    let e = error(json!({"type": "integer", "enum": ["a"]}));
    assert_eq!(e.keyword, "enum");
    let e = error(json!({"type": "string", "enum": ["a"], "const": "b"}));
    assert_eq!(e.keyword, "const");
    assert!(error(json!(false)).reason.contains("accepts nothing"));
}

#[test]
fn invalid_annotations_are_dropped() {
    let (out, changes) = lowered(json!({"type": "string", "title": 5, "examples": ["a"], "default": -0.0}));
    assert_eq!(out, json!({"type": "string", "examples": ["a"]}));
    assert_eq!(changes.len(), 2);
    assert!(matches!(lower_json_schema(&json!({"format": "x"})).map(|l| l.changes[0].action.clone()), Ok(LoweringAction::Dropped)));
}
