//! Tests of the TypeScript runtime against upstream's observed behaviour (strings captured from
//! `@deepseek-ai/dsh-code-runtime-worker-thread@0.1.0-rc.8` on Node 24).
//!
//! Spec: RUN-* (the code-runtime rules).

use std::sync::Arc;

use serde_json::{json, Value};

use super::TypeScriptRuntime;
use crate::code::{
    BindingFn, CodeBindingErrorClass, CodeBindingNamespace, CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime,
    CodeRuntimeLimits, RunSignal,
};

fn binding(f: impl Fn(Option<Value>) -> Result<Value, String> + Send + Sync + 'static) -> BindingFn {
    let f = Arc::new(f);
    Arc::new(move |arg| {
        let f = f.clone();
        Box::pin(async move { f(arg) })
    })
}

fn tools() -> CodeBindingNamespace {
    CodeBindingNamespace {
        global: "tools".to_owned(),
        functions: vec![
            ("echo".to_owned(), binding(|a| Ok(a.unwrap_or(Value::Null)))),
            ("fail".to_owned(), binding(|a| Err(format!("boom {}", serde_json::to_string(&a.unwrap_or(Value::Null)).unwrap())))),
            ("negz".to_owned(), binding(|_| Ok(json!(-0.0)))),
            (
                "slow".to_owned(),
                Arc::new(|a: Option<Value>| {
                    Box::pin(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        Ok(a.unwrap_or(Value::Null))
                    }) as crate::definition::BoxFuture<'static, Result<Value, String>>
                }),
            ),
        ],
        error_class: Some(CodeBindingErrorClass { name: "ToolCallError".to_owned(), member_name_property: "toolName".to_owned() }),
    }
}

fn limits() -> CodeRuntimeLimits {
    CodeRuntimeLimits { compute_ms: 2_000.0, max_wall_ms: 10_000.0, max_output_bytes: 1 << 20, max_heap_bytes: 64 << 20 }
}

async fn run_with(limits: CodeRuntimeLimits, program: &str, signal: RunSignal) -> CodeRunResult {
    let runtime = TypeScriptRuntime::new(limits).unwrap();
    runtime.run(CodeRunRequest { program: program.to_owned(), bindings: vec![tools()], signal }).await.unwrap()
}

async fn run(program: &str) -> CodeRunResult {
    run_with(limits(), program, RunSignal::new()).await
}

fn error_of(result: &CodeRunResult) -> (CodeRunErrorKind, &str) {
    let error = result.error.as_ref().unwrap_or_else(|| panic!("no error: {result:?}"));
    (error.kind, error.message.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_level_await_and_return() {
    let result = run("const x: number = await tools.echo({a: 1}); console.log('got', x); return [x, 2];").await;
    assert_eq!(result.error, None);
    assert_eq!(result.logs, vec!["got { a: 1 }"]);
    assert_eq!(result.value, Some(json!([{"a": 1}, 2])));
}

/// Development aid: `DSH_TS_PROGRAM=file cargo test -p dsh-tools --lib explore -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "development aid"]
async fn explore() {
    let Ok(path) = std::env::var("DSH_TS_PROGRAM") else { return };
    let program = std::fs::read_to_string(path).unwrap();
    let result = run(&program).await;
    println!("{}", serde_json::to_string_pretty(&json!({"logs": result.logs, "value": result.value, "error": result.error.map(|e| json!({"kind": e.kind.as_str(), "message": e.message}))})).unwrap());
}
