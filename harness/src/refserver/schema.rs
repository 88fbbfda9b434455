//! The `schema/*` requests (feature `schema`, `conformance/PROTOCOL.md` § Messages): the reference's
//! public schema functions served directly, with no fixture — `schema/check`
//! (`dsh_tools::assert_supported_json_schema`, or `assert_object_json_schema` with `objectRoot: true`), `schema/validate` (the same assertion, then
//! `dsh_tools::validate_json_schema_value` with root label `root`, default `value`) and `schema/compile`
//! (`dsh_tools::parameter_spec_to_json_schema` / `value_spec_to_json_schema`). What they throw is a
//! `JsonSchemaError` outcome with upstream's message form. Values of any depth are only borrowed here; the
//! compiled schema is handed back for the server to write and dismantle.
//!
//! Spec: the SCHEMA area (`spec/rules/schema.yaml`), exercised by `corpus/validation/`.

use serde_json::{Value, json};

use super::rpc::{Failure, Params};

/// `{ "threw": { message, name: "JsonSchemaError", code: "UNSUPPORTED_SCHEMA", violations } }` for a schema
/// error, as upstream's JsonSchemaError carries them (SCHEMA-026).
pub fn threw(error: &dsh_tools::JsonSchemaError) -> Value {
    json!({ "threw": {
        "message": error.to_string(),
        "name": "JsonSchemaError",
        "code": "UNSUPPORTED_SCHEMA",
        "violations": error.violations,
    } })
}

/// Serves `schema/check`, `schema/validate` and `schema/compile`; `None` for any other method.
pub fn handle(method: &str, params: Params<'_>) -> Option<Result<Value, Failure>> {
    let outcome = match method {
        "schema/check" => check(params),
        "schema/validate" => validate(params),
        "schema/compile" => compile(params),
        _ => return None,
    };
    Some(outcome)
}

fn check(params: Params<'_>) -> Result<Value, Failure> {
    let schema = params.json("schema")?;
    let assert = match params.opt_parse::<bool>("objectRoot")? {
        Some(true) => dsh_tools::assert_object_json_schema,
        _ => dsh_tools::assert_supported_json_schema,
    };
    Ok(match assert(schema) {
        Ok(()) => json!({ "outcome": { "ok": true } }),
        Err(e) => json!({ "outcome": threw(&e) }),
    })
}

fn validate(params: Params<'_>) -> Result<Value, Failure> {
    let schema = params.json("schema")?;
    let value = params.json("value")?;
    if let Err(e) = dsh_tools::assert_supported_json_schema(schema) {
        return Ok(json!({ "outcome": threw(&e) }));
    }
    let root = params.opt_str("root")?.unwrap_or("value");
    let violations = dsh_tools::validate_json_schema_value(schema, value, root);
    Ok(json!({ "outcome": { "ok": true }, "violations": violations }))
}

fn compile(params: Params<'_>) -> Result<Value, Failure> {
    let spec = params.json("spec")?;
    let compiled = match params.str("kind")? {
        "parameters" => dsh_tools::parameter_spec_to_json_schema(spec),
        "value" => dsh_tools::value_spec_to_json_schema(spec),
        other => return Err(Failure::params(format!("unknown schema kind {other:?} (parameters | value)"))),
    };
    Ok(match compiled {
        Ok(schema) => {
            // Moved in after `json!`, which would copy a `Value` operand recursively (schemas 100,000 deep).
            let mut result = json!({ "outcome": { "ok": true } });
            result["schema"] = schema;
            result
        }
        Err(e) => json!({ "outcome": threw(&e) }),
    })
}
