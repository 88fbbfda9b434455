//! The `tools/code-dispatch-log` waterfall through the embedder API (`ToolRuntime::on_code_dispatch_log`)
//! with the real TypeScript runtime: a listener's replacement reaches only the settle record, an agent-scoped
//! listener sees only its agent's dispatches, a failing one is contained with rc.8's warning.
//!
//! Spec: RUN-046, RUN-047, RUN-048, RUN-049.

#![cfg(feature = "typescript")]

use std::sync::{Arc, Mutex};

use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::code::{CodeDispatchEvent, CodeRuntimeLimits, code_dispatch_log_fn};
use dsh_tools::{
    OutputDeclaration, Parameters, ScopeKey, ToolDefinition, ToolExecutionInput, ToolFailure, ToolMode, ToolRuntime, ToolsConfig,
};
use serde_json::{Value, json};

fn runtime_with_echo() -> (ToolRuntime, dsh_tools::HookGuard, dsh_tools::Registration) {
    let rt = ToolRuntime::new(ToolsConfig::with_mode(ToolMode::Code));
    let render = Arc::new(|_: &Value, value: &Value| Ok(vec![json!({"type": "text", "text": value.as_str().unwrap_or_default()})]));
    let echo = ToolDefinition::new(
        "echo",
        "returns full",
        Parameters::Dsl(json!({})),
        OutputDeclaration { schema: json!({"type": "string"}), render, presentation_meta: None },
        Arc::new(|_, _| Box::pin(async { Ok(json!("full")) })),
    );
    let registered = match rt.register(echo, None) {
        Ok(registration) => registration,
        Err(e) => panic!("register: {}", e.message),
    };
    let ts = match TypeScriptRuntime::new(CodeRuntimeLimits::default()) {
        Ok(ts) => ts,
        Err(e) => panic!("runtime: {e}"),
    };
    let mounted = rt.mount_code_runtime(Arc::new(ts));
    (rt, mounted, registered)
}

/// Runs `return await tools.echo({})` for `agent`; returns the program's value and the logged contents.
fn run(rt: &ToolRuntime, agent: &ScopeKey, call_id: &str) -> (Value, Vec<Value>) {
    let logged = Arc::new(Mutex::new(Vec::new()));
    let _observer = {
        let logged = Arc::clone(&logged);
        rt.on_code_dispatch(Arc::new(move |event| {
            if let CodeDispatchEvent::Settled(s) = event {
                logged.lock().unwrap_or_else(|p| p.into_inner()).push(s.content.clone());
            }
        }))
    };
    let mut input = ToolExecutionInput::new(call_id, "run_code", json!({"code": "return await tools.echo({});", "description": "echo"}));
    input.agent = Some(agent.clone());
    let tokio = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(tokio) => tokio,
        Err(e) => panic!("tokio: {e}"),
    };
    let result = tokio.block_on(rt.execute(input)).to_json();
    let contents = logged.lock().unwrap_or_else(|p| p.into_inner()).clone();
    (result["value"]["result"].clone(), contents)
}

#[test]
fn a_scoped_replacement_reaches_only_its_agents_log_and_returns_are_unvalidated() {
    let (rt, _mounted, _echo) = runtime_with_echo();
    let (a, b) = (ScopeKey::new("a"), ScopeKey::new("b"));
    let _only_b = rt.on_code_dispatch_log(
        Some(&b),
        code_dispatch_log_fn(|_, _| Box::pin(async { Ok(json!([{"type": "text", "text": "PREVIEW"}])) })),
    );
    assert_eq!(run(&rt, &a, "c1"), (json!("full"), vec![json!([{"type": "text", "text": "full"}])]));
    assert_eq!(run(&rt, &b, "c2"), (json!("full"), vec![json!([{"type": "text", "text": "PREVIEW"}])]));
    let _odd = rt.prepend_code_dispatch_log(None, code_dispatch_log_fn(|_, _| Box::pin(async { Ok(json!(42)) })));
    assert_eq!(run(&rt, &a, "c3"), (json!("full"), vec![json!(42)]));
}

#[test]
fn a_failing_listener_is_contained_and_warned() {
    let (rt, _mounted, _echo) = runtime_with_echo();
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let _sink = {
        let warnings = Arc::clone(&warnings);
        rt.on_log(Arc::new(move |line| warnings.lock().unwrap_or_else(|p| p.into_inner()).push(line.to_owned())))
    };
    let _broken = rt.on_code_dispatch_log(
        None,
        code_dispatch_log_fn(|_, _| Box::pin(async { Err(ToolFailure::message("spill failed")) })),
    );
    let a = ScopeKey::new("a");
    assert_eq!(run(&rt, &a, "c1"), (json!("full"), vec![json!([{"type": "text", "text": "full"}])]));
    assert_eq!(
        *warnings.lock().unwrap_or_else(|p| p.into_inner()),
        ["tools: code-dispatch-log listener failed for echo: spill failed; logging the original settled content"]
    );
}
