//! In-process schema properties no black-box scenario can see (rules marked `observable: false`):
//! the schemas a caller gets back are detached from the registry (REG-017), and schema records and
//! arrays are plain JSON — the JSON-expressible counterparts of upstream's non-plain records and
//! non-ordinary arrays are rejected with upstream's messages (SCHEMA-012).
//!
//! Spec: REG-017, SCHEMA-012.

use std::sync::Arc;

use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolExecutionInput, ToolRuntime, ToolsConfig, parameter_spec_to_json_schema};
use serde_json::{Value, json};

fn echo() -> ToolDefinition {
    ToolDefinition::new(
        "echo",
        "d",
        Parameters::Dsl(json!({ "text": { "type": "string", "required": true } })),
        OutputDeclaration {
            schema: json!({"type": "string"}),
            render: Arc::new(|_, v| Ok(vec![json!({"type": "text", "text": v})])),
            presentation_meta: None,
        },
        Arc::new(|args, _| Box::pin(async move { Ok(args.get("text").cloned().unwrap_or(Value::Null)) })),
    )
}

/// REG-017: writing to a returned schema (`Arc::make_mut` is the only way to get `&mut` to it) copies
/// it; later `schemas` results and the registered definition's argument check are unchanged.
#[tokio::test]
async fn a_returned_schema_is_a_detached_copy() {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let _tool = rt.register(echo(), None);
    let before = rt.schemas(None);
    let original = (*before[0].parameters).clone();

    let mut returned = rt.schemas(None);
    let parameters = Arc::make_mut(&mut returned[0].parameters);
    parameters["required"] = json!([]);
    parameters["properties"]["text"] = json!({ "type": "number" });
    parameters["properties"]["extra"] = json!({ "type": "string" });

    let after = rt.schemas(None);
    assert_eq!(*after[0].parameters, original);
    assert_ne!(*returned[0].parameters, original);
    // The definition still checks arguments against the schema it registered.
    let result = rt.execute(ToolExecutionInput::new("c1", "echo", json!({}))).await;
    assert!(result.is_error());
    let result = rt.execute(ToolExecutionInput::new("c2", "echo", json!({ "text": "hi" }))).await;
    assert!(!result.is_error());
}

/// SCHEMA-012: `serde_json::Value` has no symbol or non-enumerable keys, no class instances and no
/// sparse arrays (a `Map<String, Value>` holds own string keys, a `Vec<Value>` is dense), so those
/// forms cannot reach the reference. What JSON can express instead — a spec that is not a record, an
/// array-like object where an array belongs — is rejected with upstream's messages.
#[test]
fn non_records_and_array_likes_are_rejected() {
    let message = |spec: Value| match parameter_spec_to_json_schema(&spec) {
        Ok(schema) => panic!("accepted: {schema}"),
        Err(e) => e.violations.join("; "),
    };
    assert_eq!(message(json!({ "a": [] })), "parameters.a must be a value schema object");
    assert_eq!(message(json!({ "a": "string" })), "parameters.a must be a value schema object");
    assert_eq!(
        message(json!({ "a": { "type": "string", "enum": { "0": "x", "length": 1 } } })),
        "parameters.a.enum must be a non-empty array of scalar values"
    );
}
