//! `run_code` content bytes against upstream: `run_code_render.jsonl` holds `{logs, result?, text}` cases
//! whose `text` upstream rc.8's own `renderJsonValue` / `renderValue` produced (extracted from the
//! installed bundle by a throwaway Node 24 script: hand-picked edge cases plus 300 generated values with
//! ECMAScript number forms, escapes, integer-like keys and depths past the indentation cap). Each case
//! runs through the whole transport (a runtime that completes with the case's logs and value), so the
//! value's JavaScript property order and the output declaration's render are both exercised.
//!
//! Spec: RUN-024, RUN-025.

use std::sync::Arc;

use dsh_tools::code::{CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeMisuse};
use dsh_tools::{BoxFuture, ToolExecutionInput, ToolMode, ToolRuntime, ToolsConfig};
use serde_json::{Value, json};

/// Completes every run with the logs and value the program text (a JSON case) names.
struct Fixed;

impl CodeRuntime for Fixed {
    fn language(&self) -> &str {
        "typescript"
    }

    fn run(&self, request: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>> {
        let case: Value = serde_json::from_str(&request.program).unwrap_or(Value::Null);
        Box::pin(async move {
            let logs = case["logs"].as_array().map(|l| l.iter().map(|s| s.as_str().unwrap_or_default().to_owned()).collect()).unwrap_or_default();
            Ok(CodeRunResult { logs, value: case.get("result").cloned(), error: None })
        })
    }
}

#[test]
fn content_matches_upstream_byte_for_byte() {
    let rt = ToolRuntime::new(ToolsConfig::with_mode(ToolMode::Code));
    let _r = rt.mount_code_runtime(Arc::new(Fixed));
    let cases = include_str!("run_code_render.jsonl");
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => panic!("runtime: {e}"),
    };
    let mut checked = 0;
    for (i, line) in cases.lines().enumerate() {
        let case: Value = match serde_json::from_str(line) {
            Ok(case) => case,
            Err(e) => panic!("line {}: {e}", i + 1),
        };
        let mut program = case.clone();
        if let Some(map) = program.as_object_mut() {
            map.shift_remove("text");
        }
        let input = ToolExecutionInput::new(format!("c{i}"), "run_code", json!({"code": program.to_string(), "description": "render"}));
        let result = runtime.block_on(rt.execute(input));
        assert!(!result.is_error(), "line {}: {}", i + 1, result.to_json());
        assert_eq!(result.content().len(), 1);
        assert_eq!(result.content()[0]["text"], case["text"], "line {}", i + 1);
        checked += 1;
    }
    assert!(checked > 300);
}
