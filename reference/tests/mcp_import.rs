//! Importing an MCP `tools/list` result: real-world schemas lowered and registered, the report of what
//! changed, `readOnlyHint` → parallel, call results mapped to values and failures, and a failing tool
//! named in the error.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::sync::{Arc, Mutex};

use dsh_tools::mcp::{McpCaller, import_tools_list};
use dsh_tools::schema::lower::LoweringAction;
use dsh_tools::{ExecutionMode, ToolExecutionInput, ToolRuntime, ToolsConfig};
use serde_json::{Value, json};

fn list() -> Value {
    json!({"tools": [
        {
            "name": "search",
            "title": "Search",
            "description": "Full-text search",
            "inputSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1},
                    "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 50, "default": 10},
                    "since": {"type": "string", "format": "date-time"},
                    "filter": {"$ref": "#/$defs/Filter"}
                },
                "required": ["query"],
                "$defs": {"Filter": {"anyOf": [{"type": "string", "enum": ["all", "recent"]}, {"type": "null"}]}}
            },
            "outputSchema": {
                "type": "object",
                "properties": {"hits": {"type": "array", "items": {"type": "object", "properties": {
                    "url": {"type": "string", "format": "uri"}, "score": {"type": "number", "exclusiveMinimum": 0}}}}},
                "required": ["hits"]
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": true},
            "icons": []
        },
        {"name": "delete", "description": "Delete a file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
         "annotations": {"destructiveHint": true}}
    ]})
}

/// A caller that records calls and answers from a script.
fn caller(calls: Arc<Mutex<Vec<(String, Value)>>>) -> McpCaller {
    Arc::new(move |name, arguments, _ctx| {
        calls.lock().unwrap().push((name.clone(), arguments.clone()));
        Box::pin(async move {
            Ok(match (name.as_str(), arguments.get("path").and_then(Value::as_str)) {
                ("search", _) => json!({"content": [{"type": "text", "text": "{\"hits\":[]}"}], "structuredContent": {"hits": [{"url": "https://x", "score": 1.5}]}}),
                ("delete", Some("/etc")) => json!({"content": [{"type": "text", "text": "permission denied"}], "isError": true}),
                _ => json!({"content": [{"type": "text", "text": "deleted"}, {"type": "text", "text": "1 file"}]}),
            })
        })
    })
}

#[test]
fn a_real_world_list_registers_and_reports_every_change() {
    let import = import_tools_list(&list(), caller(Arc::default())).unwrap();
    let runtime = ToolRuntime::new(ToolsConfig::default());
    let guards: Vec<_> = import.definitions.into_iter().map(|d| runtime.register(d, None).unwrap()).collect();
    assert_eq!(guards.len(), 2);
    let search = runtime.get("search", None).unwrap();
    assert_eq!(search.parameters["properties"]["limit"], json!({"oneOf": [{"type": "integer"}, {"type": "null"}], "default": 10}));
    assert_eq!(search.parameters["properties"]["filter"], json!({"oneOf": [{"type": "string", "enum": ["all", "recent"]}, {"type": "null"}]}));
    dsh_tools::assert_supported_json_schema(&search.parameters).unwrap();
    let report: Vec<String> = import.reports[0].changes.iter().map(|c| match &c.action {
        LoweringAction::Dropped => format!("{} -{}", c.path, c.keyword),
        LoweringAction::Rewritten { .. } => format!("{} ~{}", c.path, c.keyword),
    }).collect();
    for expected in [
        "$ -icons", "inputSchema.$ -$schema", "inputSchema.$.properties.query -minLength", "inputSchema.$.properties.limit -minimum",
        "inputSchema.$.properties.limit ~type", "inputSchema.$.properties.since -format", "inputSchema.$.properties.filter ~$ref",
        "inputSchema.$.properties.filter ~anyOf", "inputSchema.$ -$defs", "outputSchema.$.properties.hits.items.properties.url -format",
        "outputSchema.$.properties.hits.items.properties.score -exclusiveMinimum", "annotations ~readOnlyHint", "annotations -openWorldHint",
    ] {
        assert!(report.contains(&expected.to_owned()), "{expected} missing from {report:#?}");
    }
    assert!(import.reports[1].changes.iter().any(|c| c.keyword == "outputSchema"), "{:?}", import.reports[1]);
    assert_eq!(runtime.execution_mode(&ToolExecutionInput::new("1", "search", json!({"query": "q"}))), ExecutionMode::Parallel);
    assert_eq!(runtime.execution_mode(&ToolExecutionInput::new("2", "delete", json!({"path": "/a"}))), ExecutionMode::Exclusive);
}

#[tokio::test]
async fn calls_reach_the_server_and_results_map_to_values_and_failures() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let import = import_tools_list(&list(), caller(Arc::clone(&calls))).unwrap();
    let runtime = ToolRuntime::new(ToolsConfig::default());
    let _guards: Vec<_> = import.definitions.into_iter().map(|d| runtime.register(d, None).unwrap()).collect();
    let searched = runtime.execute(ToolExecutionInput::new("1", "search", json!({"query": "rust"}))).await.to_json();
    assert_eq!(searched["value"], json!({"hits": [{"url": "https://x", "score": 1.5}]}));
    assert_eq!(searched["content"], json!([{"type": "text", "text": "{\"hits\":[{\"url\":\"https://x\",\"score\":1.5}]}"}]));
    let deleted = runtime.execute(ToolExecutionInput::new("2", "delete", json!({"path": "/tmp/a"}))).await.to_json();
    assert_eq!(deleted["value"], json!("deleted\n1 file"));
    assert_eq!(deleted["content"], json!([{"type": "text", "text": "deleted\n1 file"}]));
    let denied = runtime.execute(ToolExecutionInput::new("3", "delete", json!({"path": "/etc"}))).await.to_json();
    assert_eq!(denied["error"]["message"], json!("permission denied"));
    let seen: Vec<String> = calls.lock().unwrap().iter().map(|(n, a)| format!("{n} {a}")).collect();
    assert_eq!(seen, ["search {\"query\":\"rust\"}", "delete {\"path\":\"/tmp/a\"}", "delete {\"path\":\"/etc\"}"]);
}

#[test]
fn a_tool_that_cannot_be_lowered_is_named() {
    let list = json!([
        {"name": "ok", "inputSchema": {"type": "object"}},
        {"name": "tree", "inputSchema": {"type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}}}
    ]);
    let error = import_tools_list(&list, caller(Arc::default())).unwrap_err();
    assert_eq!((error.index, error.tool.as_deref()), (1, Some("tree")));
    assert!(error.to_string().starts_with("MCP tool \"tree\" (tools[1]): inputSchema: cannot lower JSON Schema keyword `$ref`"), "{error}");
    assert!(std::error::Error::source(&error).is_some());
    let unnamed = import_tools_list(&json!({"tools": [{"inputSchema": {}}]}), caller(Arc::default())).unwrap_err();
    assert_eq!(unnamed.to_string(), "MCP tools[0]: a tool needs a string `name`");
    let not_object = import_tools_list(&json!([{"name": "s", "inputSchema": {"type": "string"}}]), caller(Arc::default())).unwrap_err();
    assert_eq!(not_object.reason, "inputSchema must describe an object");
}
