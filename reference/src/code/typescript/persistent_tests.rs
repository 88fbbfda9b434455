//! Tests of the TypeScript backend's persistent mode (seed 002's `persistent-in-memory`): state kept per
//! owner across runs, owners kept apart, release (idle and busy), a failed run discarding the environment,
//! runs of one owner taking turns, and per-call mode ignoring the owner.
//!
//! Spec: CDM-036..CDM-041.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{json, Value};

use super::TypeScriptRuntime;
use crate::code::{
    BindingFn, CodeBindingNamespace, CodeExecutionMode, CodeRunErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime,
    CodeRuntimeLimits, RunSignal, StateOwner, ENVIRONMENT_RELEASED,
};

fn tools() -> CodeBindingNamespace {
    let hang: BindingFn = Arc::new(|_| Box::pin(std::future::pending()));
    let slow: BindingFn = Arc::new(|a: Option<Value>| {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
            Ok(a.unwrap_or(Value::Null))
        })
    });
    CodeBindingNamespace { global: "tools".to_owned(), functions: vec![("hang".to_owned(), hang), ("slow".to_owned(), slow)].into(), error_class: None }
}

fn runtime(mode: CodeExecutionMode, wall_ms: f64) -> TypeScriptRuntime {
    let limits = CodeRuntimeLimits { compute_ms: 2_000.0, max_wall_ms: wall_ms, max_output_bytes: 1 << 20, max_heap_bytes: 64 << 20, max_model_text_bytes: None };
    TypeScriptRuntime::new(limits).unwrap().with_execution_mode(mode)
}

async fn run(rt: &TypeScriptRuntime, owner: &str, program: &str) -> CodeRunResult {
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
async fn three_runs_share_declarations_and_globals() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 10_000.0);
    let first = "globalThis.x = 41; function f(): number { return x + 1 } const k = 'kept'; class C { v() { return 7 } } let late = 1;";
    assert_eq!(run(&rt, "a", first).await.value, None);
    assert_eq!(value(run(&rt, "a", "const y = f(); return [y, k, new C().v(), late]").await), json!([42, "kept", 7, 1]));
    assert_eq!(value(run(&rt, "a", "return [y, typeof f, typeof tools.slow]").await), json!([42, "function", "function"]));
    // Another owner has an environment of its own.
    assert_eq!(value(run(&rt, "b", "return [typeof x, typeof f]").await), json!(["undefined", "undefined"]));
    assert_eq!(rt.retained(), [StateOwner::new("a"), StateOwner::new("b")]);
}

#[tokio::test]
async fn a_kept_function_finds_the_current_bindings() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 10_000.0);
    run(&rt, "a", "async function g(n: number) { return await tools.slow(n) }").await;
    assert_eq!(value(run(&rt, "a", "return await g(5)").await), json!(5));
}

#[tokio::test]
async fn a_program_exception_keeps_the_environment() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 10_000.0);
    let failed = run(&rt, "a", "globalThis.x = 1; const y = 2; throw new Error('boom')").await;
    assert_eq!(failed.error.map(|e| e.kind), Some(CodeRunErrorKind::Exception));
    assert_eq!(value(run(&rt, "a", "return [x, y]").await), json!([1, 2]));
}

#[tokio::test]
async fn a_name_in_its_dead_zone_is_skipped() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 10_000.0);
    run(&rt, "a", "const a = 1; if (a) return 0; const b = 2;").await;
    assert_eq!(value(run(&rt, "a", "return [a, typeof b]").await), json!([1, "undefined"]));
}

#[tokio::test]
async fn a_timeout_discards_the_environment() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 300.0);
    run(&rt, "a", "globalThis.x = 1").await;
    let stuck = run(&rt, "a", "await new Promise(() => {})").await;
    assert_eq!(stuck.error.map(|e| e.kind), Some(CodeRunErrorKind::Timeout));
    assert_eq!(rt.retained(), Vec::<StateOwner>::new());
    assert_eq!(value(run(&rt, "a", "return typeof x").await), json!("undefined"));
}

#[tokio::test]
async fn release_drops_an_idle_environment_once() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 10_000.0);
    run(&rt, "a", "globalThis.x = 1").await;
    assert!(rt.release(&StateOwner::new("a")));
    assert!(!rt.release(&StateOwner::new("a")));
    assert!(rt.retained().is_empty());
    assert_eq!(value(run(&rt, "a", "return typeof x").await), json!("undefined"));
}

#[tokio::test]
async fn releasing_a_busy_environment_aborts_its_run() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 10_000.0);
    let busy = tokio::spawn({
        let rt = rt.clone();
        async move { run(&rt, "a", "globalThis.x = 1; await tools.hang({})").await }
    });
    while rt.retained().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(rt.release(&StateOwner::new("a")));
    let ended = busy.await.unwrap().error.unwrap();
    assert_eq!((ended.kind, ended.message.as_str()), (CodeRunErrorKind::Abort, ENVIRONMENT_RELEASED));
    assert!(rt.retained().is_empty());
    assert_eq!(value(run(&rt, "a", "return typeof x").await), json!("undefined"));
}

#[tokio::test]
async fn runs_of_one_owner_take_turns() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 10_000.0);
    let program = "globalThis.n = (globalThis.n ?? 0) + 1; const mine = n; await tools.slow(0); return [mine, n]";
    let (a, b) = tokio::join!(run(&rt, "a", program), run(&rt, "a", program));
    let mut seen = [value(a), value(b)];
    seen.sort_by_key(|v| v[0].as_i64());
    assert_eq!(seen, [json!([1, 1]), json!([2, 2])]);
}

#[tokio::test]
async fn per_call_mode_ignores_the_owner() {
    let rt = runtime(CodeExecutionMode::PerCall, 10_000.0);
    run(&rt, "a", "globalThis.x = 1; var v = 2").await;
    assert_eq!(value(run(&rt, "a", "return [typeof x, typeof v]").await), json!(["undefined", "undefined"]));
    assert!(rt.retained().is_empty());
    assert!(!rt.release(&StateOwner::new("a")));
}

#[tokio::test]
async fn a_binding_or_timer_kept_from_an_earlier_run_fails_at_once() {
    // A wall ceiling far above the test's patience: a stale call that never settles would show as a timeout.
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 60_000.0);
    let kept = run(&rt, "a", "globalThis.keptCall = tools.slow; globalThis.keptTimer = setInterval; return 1").await;
    assert!(kept.error.is_none(), "{kept:?}");
    let program = "const out = [];\n\
        try { await keptCall(1); } catch (e) { out.push(e.message); }\n\
        try { keptTimer(() => {}, 5); } catch (e) { out.push(e.message); }\n\
        out.push(await tools.slow(2));\n\
        return out;";
    let started = std::time::Instant::now();
    let result = run(&rt, "a", program).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "stale calls must not wait for the wall ceiling");
    assert_eq!(
        result.value,
        Some(json!([
            "binding `slow` belongs to an earlier code run that has finished; call it through this run's bindings",
            "setInterval belongs to an earlier code run that has finished; call it through this run's bindings",
            2
        ])),
        "{result:?}"
    );
}

#[tokio::test]
async fn top_level_declarations_are_live_bindings_and_const_stays_constant() {
    let rt = runtime(CodeExecutionMode::PersistentInMemory, 5_000.0);
    let declared = run(&rt, "a", "let n = 0; function inc() { return ++n } const c = 1; class K { v() { return n } }").await;
    assert!(declared.error.is_none(), "{declared:?}");
    let used = run(&rt, "a", "inc(); inc(); let e = ''; try { c = 2 } catch (x) { e = x.name } return [n, c, e, new K().v()]").await;
    assert_eq!(used.value, Some(json!([2, 1, "TypeError", 2])), "{used:?}");
    // Assigning from a later run updates the binding the declaring run's function sees.
    assert_eq!(run(&rt, "a", "n = 10; return inc()").await.value, Some(json!(11)));
    // A later run's own declaration rebinds the name; the earlier function keeps its own.
    assert_eq!(run(&rt, "a", "let n = 100; return [n, inc()]").await.value, Some(json!([100, 12])));
    assert_eq!(run(&rt, "a", "return n").await.value, Some(json!(100)));
}
