//! The presenter API an embedding UI uses (PRES-001..PRES-004, RUN-044, RUN-045): `ToolRuntime::resolve`
//! hands back the resolved definition; its presenters return the tool's typed views, validate softly for
//! DSL definitions, and `run_code` carries `presentCall` alone over its canonical output schema.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::Arc;

use dsh_tools::views::{GenericCallView, ReadFileLine, ReadResultView, ToolCallKind};
use dsh_tools::{
    OutputDeclaration, Parameters, ToolCallView, ToolDefinition, ToolMode, ToolResult, ToolResultView, ToolRuntime,
    ToolsConfig,
};
use serde_json::{Value, json};

fn read_tool(parameters: Parameters) -> ToolDefinition {
    let mut tool = ToolDefinition::new(
        "read",
        "reads a file",
        parameters,
        OutputDeclaration {
            schema: json!({"type": "string"}),
            render: Arc::new(|_, v| Ok(vec![json!({"type": "text", "text": v})])),
            presentation_meta: None,
        },
        Arc::new(|_, _| Box::pin(async { Ok(Value::String("x".into())) })),
    );
    tool.present_call = Some(Arc::new(|args| {
        Some(ToolCallView::Generic(GenericCallView {
            title: format!("Read {}", args["path"]),
            kind: Some(ToolCallKind::Read),
            raw_input: None,
            content: None,
            locations: None,
        }))
    }));
    // The read-tool pattern: narrow the persisted meta back into a card.
    tool.present_result = Some(Arc::new(|_, result| result.meta.as_ref().and_then(|m| serde_json::from_value(m.clone()).ok())));
    tool
}

#[test]
fn dsl_presenters_validate_softly_and_raw_ones_do_not() {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let _reg = rt.register(read_tool(Parameters::Dsl(json!({"path": {"type": "string", "required": true}}))), None).unwrap();
    let tool = rt.resolve("read", None).expect("registered");
    assert!(tool.has_present_call() && tool.has_present_result());
    let call = tool.present_call(&json!({"path": "a"})).expect("valid arguments present");
    assert_eq!(call.to_json(), json!({"card": "generic", "title": "Read \"a\"", "kind": "read"}));
    assert_eq!(tool.present_call(&json!({"path": 1})), None);
    assert_eq!(tool.present_call(&Value::Null), None);

    let meta = json!({"card": "read", "path": "a", "offset": 1, "lines": [{"number": 1, "text": "x"}], "totalLines": 1});
    let result = ToolResult { content: vec![], is_error: false, meta: Some(meta) };
    let expected = ToolResultView::Read(ReadResultView {
        title: None,
        path: "a".into(),
        offset: 1.into(),
        lines: vec![ReadFileLine { number: 1.into(), text: "x".into() }],
        total_lines: 1.into(),
        lang: None,
        content: None,
    });
    assert_eq!(tool.present_result(&json!({"path": "a"}), &result), Some(expected));
    assert_eq!(tool.present_result(&json!({}), &result), None);
    assert_eq!(tool.present_result(&json!({"path": "a"}), &ToolResult { meta: None, ..result }), None);

    let rt = ToolRuntime::new(ToolsConfig::default());
    let _reg = rt.register(read_tool(Parameters::Raw(json!({"type": "object"}))), None).unwrap();
    let raw = rt.resolve("read", None).expect("registered");
    assert!(raw.present_call(&json!({"path": 1})).is_some(), "a raw definition owns its input");
    assert!(rt.resolve("missing", None).is_none());
}

#[test]
fn run_code_carries_present_call_alone() {
    let rt = ToolRuntime::new(ToolsConfig::with_mode(ToolMode::Code));
    let run_code = rt.resolve("run_code", None).expect("listed under code");
    assert!(run_code.has_present_call() && !run_code.has_present_result());
    let def = run_code.definition();
    assert!(def.is_concurrency_safe.is_none() && def.timeout_ms.is_none() && def.finalize_content.is_none());
    assert!(def.output.as_ref().is_some_and(|o| o.presentation_meta.is_none()));
    assert_eq!(
        run_code.output_schema(),
        &json!({"type": "object", "additionalProperties": false,
                "properties": {"logs": {"type": "array", "items": {"type": "string"}}, "result": {}}, "required": ["logs"]})
    );
    let card = run_code.present_call(&json!({"code": "return 1", "description": "Return one"})).expect("valid");
    assert_eq!(card.to_json(), json!({"card": "generic", "title": "Return one", "kind": "execute", "rawInput": "return 1"}));
    assert_eq!(run_code.present_call(&json!({"code": 1, "description": "d"})), None);
    assert_eq!(run_code.present_result(&json!({"code": "c", "description": "d"}), &ToolResult { content: vec![], is_error: false, meta: None }), None);
    assert!(ToolRuntime::new(ToolsConfig::default()).resolve("run_code", None).is_none(), "not under native");
}
