//! Typed and MCP tools check their arguments against the full schema they were built from before the
//! handler or the server sees them: a violation is `INVALID_ARGS` naming the path, a constraint lowering
//! dropped from the model's schema is still enforced, a constraint that cannot be enforced is refused
//! when the tool is built, and each check can be turned off.
#![cfg(feature = "typed")]
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use dsh_tools::mcp::{McpCaller, McpImportOptions, import_tools_list, import_tools_list_with};
use dsh_tools::typed::{JsonSchema, TypedTool, TypedToolErrorKind};
use dsh_tools::{ErrorCode, ToolExecutionInput, ToolRuntime};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // `cursor` matters only through the schema it derives
struct Page {
    /// How many results (1 to 20).
    #[schemars(range(min = 1, max = 20))]
    limit: u32,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    cursor: Option<String>,
}

fn page(calls: Arc<Mutex<usize>>) -> TypedTool<Page, u32> {
    TypedTool::new("page", "One page of results", move |args: Page, _| {
        *calls.lock().unwrap() += 1;
        async move { Ok(args.limit) }
    })
}

async fn call(rt: &ToolRuntime, name: &str, args: Value) -> dsh_tools::ToolExecutionResult {
    rt.execute(ToolExecutionInput::new("c1", name, args)).await
}

#[tokio::test]
async fn a_typed_range_the_model_schema_drops_is_enforced_with_its_path() {
    let calls = Arc::new(Mutex::new(0));
    let (definition, changes) = page(Arc::clone(&calls)).build_with_changes().unwrap();
    assert!(changes.arguments.iter().any(|c| c.keyword == "maximum"), "lowering drops the range: {changes:?}");
    let rt = ToolRuntime::new(Default::default());
    let _page = rt.register(definition, None).unwrap();
    assert!(rt.get("page", None).unwrap().parameters["properties"]["limit"].get("maximum").is_none());

    let result = call(&rt, "page", json!({ "limit": 50 })).await;
    assert_eq!(result.error_code(), Some(&ErrorCode::INVALID_ARGS));
    assert_eq!(result.text(), r#"Error: invalid arguments: "limit" is greater than the maximum of 20"#);
    let result = call(&rt, "page", json!({ "limit": 0, "cursor": "NOPE" })).await;
    assert_eq!(
        result.text(),
        r#"Error: invalid arguments: "limit" is less than the minimum of 1; "cursor" does not match "^[a-z]+$""#
    );
    assert_eq!(*calls.lock().unwrap(), 0, "the handler never saw a bad call");
    assert_eq!(call(&rt, "page", json!({ "limit": 20 })).await.text(), "20");
}

#[tokio::test]
async fn the_typed_check_can_be_turned_off() {
    let calls = Arc::new(Mutex::new(0));
    let definition = page(Arc::clone(&calls)).check_arguments(false).build().unwrap();
    let rt = ToolRuntime::new(Default::default());
    let _page = rt.register(definition, None).unwrap();
    assert_eq!(call(&rt, "page", json!({ "limit": 50 })).await.text(), "50");
    let missing = call(&rt, "page", json!({})).await;
    assert_eq!(missing.text(), "Error: invalid arguments: missing field `limit`", "serde still checks what it can");
}

#[test]
fn a_typed_constraint_the_check_cannot_enforce_fails_the_build_with_the_reason() {
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)] // the build fails before any call
    struct Mail {
        #[schemars(extend("format" = "postcode"))]
        code: String,
    }
    let error = TypedTool::new("mail", "Send mail", |_: Mail, _| async move { Ok(()) }).build().unwrap_err();
    assert!(matches!(error.kind, TypedToolErrorKind::ArgumentCheck(_)), "{error:?}");
    assert_eq!(
        error.to_string(),
        "tool \"mail\": arguments schema: cannot check arguments against the schema at /properties/code/format: \
         unknown format \"postcode\" cannot be enforced (drop it, or turn the argument check off)"
    );
    let built = TypedTool::new("mail", "Send mail", |_: Mail, _| async move { Ok(()) }).check_arguments(false).build();
    assert!(built.is_ok());
}

fn list() -> Value {
    json!({"tools": [{
        "name": "search",
        "description": "Full-text search",
        "inputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "since": {"type": "string", "format": "date-time"}
            },
            "required": ["query"]
        }
    }]})
}

fn caller(calls: Arc<Mutex<Vec<Value>>>) -> McpCaller {
    Arc::new(move |_name, arguments, _ctx| {
        calls.lock().unwrap().push(arguments);
        Box::pin(async { Ok(json!({"content": [{"type": "text", "text": "found"}]})) })
    })
}

#[tokio::test]
async fn an_mcp_call_missing_a_required_field_never_reaches_the_server() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let import = import_tools_list(&list(), caller(Arc::clone(&calls))).unwrap();
    let rt = ToolRuntime::new(Default::default());
    let _tools: Vec<_> = import.definitions.into_iter().map(|d| rt.register(d, None).unwrap()).collect();

    let missing = call(&rt, "search", json!({ "limit": 5 })).await;
    assert_eq!(missing.error_code(), Some(&ErrorCode::INVALID_ARGS));
    assert_eq!(missing.text(), r#"Error: invalid arguments: missing required property "query""#);
    let bad = call(&rt, "search", json!({ "query": "", "limit": 99, "since": "yesterday" })).await;
    assert_eq!(
        bad.text(),
        r#"Error: invalid arguments: "query" is shorter than 1 character; "limit" is greater than the maximum of 50; "since" is not a "date-time""#
    );
    assert!(calls.lock().unwrap().is_empty(), "the server saw no bad call");
    assert_eq!(call(&rt, "search", json!({ "query": "rust" })).await.text(), "found");
    assert_eq!(calls.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn the_mcp_check_can_be_turned_off() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let options = McpImportOptions::default().check_arguments(false);
    let import = import_tools_list_with(&list(), caller(Arc::clone(&calls)), &options).unwrap();
    let rt = ToolRuntime::new(Default::default());
    let _tools: Vec<_> = import.definitions.into_iter().map(|d| rt.register(d, None).unwrap()).collect();
    assert_eq!(call(&rt, "search", json!({})).await.text(), "found");
    assert_eq!(*calls.lock().unwrap(), vec![json!({})]);
}

#[test]
fn an_mcp_schema_the_check_cannot_enforce_fails_the_import_naming_the_tool() {
    let list = json!([{"name": "zip", "inputSchema": {"type": "object", "properties": {"code": {"type": "string", "format": "postcode"}}}}]);
    let error = import_tools_list(&list, caller(Arc::default())).unwrap_err();
    assert_eq!(
        error.to_string(),
        "MCP tool \"zip\" (tools[0]): inputSchema: cannot check arguments against the schema at /properties/code/format: \
         unknown format \"postcode\" cannot be enforced (drop it, or turn the argument check off)"
    );
    let options = McpImportOptions::default().check_arguments(false);
    assert!(import_tools_list_with(&list, caller(Arc::default()), &options).is_ok());
}
