//! Tests of the Python backend's persistent mode (seed 002's `persistent-in-memory`): one resident process
//! per owner keeping top-level names, imports and globals across runs, owners kept apart, release (idle and
//! busy) killing the process, a failed run discarding it, and per-call mode ignoring the owner.
//!
//! Spec: CDM-036..CDM-041.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{json, Value};

use super::PythonRuntime;
use crate::code::{
    BindingFn, CodeBindingNamespace, CodeExecutionMode, CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime,
    CodeRuntimeLimits, RunSignal, StateOwner, ENVIRONMENT_RELEASED,
};

fn tools() -> CodeBindingNamespace {
    let hang: BindingFn = Arc::new(|_| Box::pin(std::future::pending()));
    let echo: BindingFn = Arc::new(|a: Option<Value>| Box::pin(async move { Ok(a.unwrap_or(Value::Null)) }));
    CodeBindingNamespace { global: "tools".to_owned(), functions: vec![("hang".to_owned(), hang), ("echo".to_owned(), echo)].into(), error_class: None }
}

fn runtime(mode: CodeExecutionMode, wall_ms: f64) -> PythonRuntime {
    let limits = CodeRuntimeLimits { compute_ms: 5_000.0, max_wall_ms: wall_ms, max_output_bytes: 1 << 20, max_heap_bytes: 512 << 20, max_model_text_bytes: None };
    PythonRuntime::new(limits).unwrap().with_execution_mode(mode)
}

async fn run(rt: &PythonRuntime, owner: &str, program: &str) -> CodeRunResult {
    let request = CodeRunRequest {
        program: program.to_owned(),
        bindings: vec![tools()],
        signal: RunSignal::new(),
        state_owner: Some(StateOwner::new(owner)),
    };
    rt.run(request).await.unwrap()
}

fn value(result: CodeRunResult) -> Value {
    assert_eq!(result.error, None, "{result:?}");
    result.value.unwrap_or(Value::Null)
}

#[tokio::test]
async fn three_runs_share_names_imports_and_functions() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 20_000.0);
    let first = "import json\nx = 41\ndef f():\n    return x + 1\nclass C:\n    v = 7\nfor i in range(3):\n    pass\nprint('one')";
    let one = run(&rt, "a", first).await;
    assert_eq!((one.error, one.logs), (None, vec!["one".to_owned()]));
    assert_eq!(value(run(&rt, "a", "y = f()\nreturn [y, C.v, i]").await), json!([42, 7, 2]));
    assert_eq!(value(run(&rt, "a", "return [json.dumps(y), callable(f), await tools.echo(y)]").await), json!(["42", true, 42]));
    assert_eq!(value(run(&rt, "b", "return [n in globals() for n in ('x', 'f', 'json')]").await), json!([false, false, false]));
    assert_eq!(rt.retained(), [StateOwner::new("a"), StateOwner::new("b")]);
}

#[tokio::test]
async fn an_exception_keeps_the_environment_and_a_timeout_discards_it() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 1_500.0);
    let failed = run(&rt, "a", "x = 1\nraise ValueError('boom')").await;
    assert_eq!(failed.error.map(|e| e.kind), Some(CodeRunErrorKind::Exception));
    assert_eq!(value(run(&rt, "a", "return x").await), json!(1));
    let stuck = run(&rt, "a", "import asyncio\nawait asyncio.Event().wait()").await;
    assert_eq!(stuck.error.map(|e| e.kind), Some(CodeRunErrorKind::Timeout));
    assert!(rt.retained().is_empty());
    assert_eq!(value(run(&rt, "a", "return 'x' in globals()").await), json!(false));
}

#[tokio::test]
async fn release_kills_the_process_idle_or_busy() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 20_000.0);
    let pid = value(run(&rt, "a", "import os\nreturn os.getpid()").await).as_i64().unwrap();
    assert!(rt.release(&StateOwner::new("a")));
    assert!(!rt.release(&StateOwner::new("a")));
    let gone = || std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| stat.contains(") Z "));
    for _ in 0..200 {
        if gone() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(gone(), "the released process {pid} is still running");
    let busy = tokio::spawn({
        let rt = rt.clone();
        async move { run(&rt, "b", "x = 1\nawait tools.hang({})").await }
    });
    while rt.retained().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(rt.release(&StateOwner::new("b")));
    let ended = busy.await.unwrap().error.unwrap();
    assert_eq!((ended.kind, ended.message.as_str()), (CodeRunErrorKind::Abort, ENVIRONMENT_RELEASED));
    assert_eq!(value(run(&rt, "b", "return 'x' in globals()").await), json!(false));
}

#[tokio::test]
async fn per_call_mode_ignores_the_owner() {
    let rt = runtime(CodeExecutionMode::PerCall, 20_000.0);
    run(&rt, "a", "x = 1").await;
    assert_eq!(value(run(&rt, "a", "return 'x' in globals()").await), json!(false));
    assert!(rt.retained().is_empty());
}

/// Every top-level form per-call mode accepts works in persistent mode and keeps its binding: annotated
/// assignments (a `global` name cannot be annotated, so they run as plain assignments), a bare annotation,
/// and an assignment expression inside a comprehension (it binds in the enclosing, top-level scope).
#[tokio::test]
async fn annotated_names_and_comprehension_walrus_targets_are_kept() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 20_000.0);
    let first = "x: int = 1\ny: list[int]\nnames: dict[str, int] = {'a': 1}\n\
                 squares = [last := n * n for n in range(4)]\nclass C:\n    field: int = 7\n\
                 def f(a: int) -> int:\n    local: int = a\n    return local\nreturn [x, squares, last, C.field, f(5)]";
    assert_eq!(value(run(&rt, "o", first).await), json!([1, [0, 1, 4, 9], 9, 7, 5]));
    let second = "x += 1\nreturn [x, names, last, C.__annotations__ == {'field': int}, f(6)]";
    assert_eq!(value(run(&rt, "o", second).await), json!([2, {"a": 1}, 9, true, 6]));
    // The same programs per call, for comparison: accepted there too.
    let per_call = runtime(CodeExecutionMode::PerCall, 20_000.0);
    assert_eq!(value(run(&per_call, "o", first).await), json!([1, [0, 1, 4, 9], 9, 7, 5]));
}
