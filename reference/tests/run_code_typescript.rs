//! The `run_code` bridge with the real TypeScript runtime on a multi-threaded tokio runtime: a binding
//! call the program makes just before it returns (never awaited) is started and drained, never abandoned,
//! however the program's thread and the transport call's task interleave (upstream's binding queues and
//! starts the call synchronously, before the program's completion can arrive).
//!
//! Spec: RUN-016, RUN-019.

#![cfg(feature = "typescript")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::code::{CodeDispatchEvent, CodeRuntimeLimits};
use dsh_tools::{OutputDeclaration, Parameters, ScopeKey, ToolDefinition, ToolExecutionInput, ToolMode, ToolRuntime, ToolsConfig};
use serde_json::json;

#[test]
fn a_call_made_just_before_the_program_returns_is_started_and_drained() {
    let rt = ToolRuntime::new(ToolsConfig::with_mode(ToolMode::Code));
    let bodies = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&bodies);
    let mut slow = ToolDefinition::new(
        "slow",
        "waits for its signal",
        Parameters::Dsl(json!({})),
        OutputDeclaration { schema: json!({"type": "string"}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
        Arc::new(move |_, ctx| {
            let counted = Arc::clone(&counted);
            Box::pin(async move {
                counted.fetch_add(1, Ordering::SeqCst);
                ctx.signal().cancelled().await;
                Ok(json!("late"))
            })
        }),
    );
    slow.is_concurrency_safe = Some(Arc::new(|_| Ok(true)));
    let _slow = rt.register(slow, None);
    let runtime = match TypeScriptRuntime::new(CodeRuntimeLimits::default()) {
        Ok(runtime) => runtime,
        Err(e) => panic!("runtime: {e}"),
    };
    let _mounted = rt.mount_code_runtime(Arc::new(runtime));
    let logged = Arc::new(AtomicUsize::new(0));
    let _log = {
        let logged = Arc::clone(&logged);
        rt.on_code_dispatch(Arc::new(move |event| {
            if let CodeDispatchEvent::Settled(s) = event {
                assert!(s.is_error);
                logged.fetch_add(1, Ordering::SeqCst);
            }
        }))
    };
    let tokio = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(tokio) => tokio,
        Err(e) => panic!("tokio: {e}"),
    };
    let agent = ScopeKey::new("agent");
    let runs = 60;
    for i in 0..runs {
        let mut input = ToolExecutionInput::new(format!("r{i}"), "run_code", json!({"code": "tools.slow({}); return 'done';", "description": "leave a call running"}));
        input.agent = Some(agent.clone());
        let rt = rt.clone();
        let result = tokio.block_on(async move { tokio::spawn(async move { rt.execute(input).await }).await });
        let result = match result {
            Ok(result) => result,
            Err(e) => panic!("join: {e}"),
        };
        assert_eq!(result.to_json()["value"], json!({"logs": [], "result": "done"}));
        assert_eq!(bodies.load(Ordering::SeqCst), i + 1, "run {i}: the call was not started");
        assert_eq!(logged.load(Ordering::SeqCst), i + 1, "run {i}: the call was not drained before the result");
    }
}
