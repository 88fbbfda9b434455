//! The `run_code` transport and dispatch bridge with a scripted runtime (`run_code_support`): listing
//! under each mode, flavors, the runtime and description checks, sub-call ids and the dispatch log,
//! commit order, the parallel cap, exclusive barriers, failures reaching the program as messages, run
//! failures as `CODE_RUN_FAILED`, settlement and the transport call's abort.
//!
//! Spec: CODE-008, CODE-009, RUN-001, RUN-004, RUN-008, RUN-011..RUN-016, RUN-019..RUN-021, RUN-024, RUN-025, RUN-032, RUN-033, RUN-036.

mod run_code_support;

use std::sync::{Arc, Mutex};

use dsh_tools::code::{CodeDispatchEvent, CodeRuntime};
use dsh_tools::{
    ErrorCode, HookGuard, OutputDeclaration, Parameters, ScopeKey, ToolDefinition, ToolExecutionInput, ToolExecutionResult,
    ToolFilter, ToolMode, ToolRuntime, ToolsConfig,
};
use run_code_support::Scripted;
use serde_json::{Value, json};
use tokio::sync::watch;

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, s: String) {
    log.lock().unwrap_or_else(|p| p.into_inner()).push(s);
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap_or_else(|p| p.into_inner()))
}

/// A tool that logs its start and end, optionally waits for a gate, and returns its `v` argument.
fn tool(name: &str, parallel: bool, log: Log, gate: Option<watch::Receiver<bool>>) -> ToolDefinition {
    let label = name.to_owned();
    let mut def = ToolDefinition::new(
        name,
        format!("tool {name}"),
        Parameters::Raw(json!({"type": "object"})),
        OutputDeclaration {
            schema: json!({}),
            render: Arc::new(|_, v| Ok(vec![json!({"type": "text", "text": v.to_string()})])),
            presentation_meta: None,
        },
        Arc::new(move |args, ctx| {
            let (log, label, mut gate) = (Arc::clone(&log), label.clone(), gate.clone());
            Box::pin(async move {
                push(&log, format!("start {label} {}", ctx.call_id()));
                if let Some(gate) = gate.as_mut() {
                    tokio::select! {
                        _ = gate.wait_for(|open| *open) => {}
                        _ = ctx.signal().cancelled() => {}
                    }
                }
                push(&log, format!("end {label} {}", ctx.call_id()));
                if args.get("fail").is_some() {
                    return Err(dsh_tools::ToolFailure::message(format!("{label} failed")));
                }
                Ok(args.get("v").cloned().unwrap_or(Value::Null))
            })
        }),
    );
    if parallel {
        def.is_concurrency_safe = Some(Arc::new(|_| Ok(true)));
    }
    def
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt.block_on(f),
        Err(e) => panic!("runtime: {e}"),
    }
}

fn runtime(mode: ToolMode, cap: Option<f64>) -> ToolRuntime {
    let mut config = ToolsConfig::with_mode(mode);
    config.max_parallel_sub_calls = cap;
    ToolRuntime::new(config)
}

fn run_code(call_id: &str, program: Value, agent: Option<&ScopeKey>) -> ToolExecutionInput {
    let mut input = ToolExecutionInput::new(call_id, "run_code", json!({"code": program.to_string(), "description": "test"}));
    input.agent = agent.cloned();
    input
}

fn observe(rt: &ToolRuntime, log: &Log) -> (HookGuard, HookGuard) {
    let results = {
        let log = Arc::clone(log);
        rt.on_result(Arc::new(move |exec, result| push(&log, format!("result {} {}", exec.call_id, result.is_error()))))
    };
    let dispatch = {
        let log = Arc::clone(log);
        rt.on_code_dispatch(Arc::new(move |event| match event {
            CodeDispatchEvent::Start(s) => push(&log, format!("dispatch-start {} {} {} {}", s.sub_call_id, s.parent_call_id, s.root_call_id, s.name)),
            CodeDispatchEvent::Settled(s) => push(&log, format!("dispatch {} {} {}", s.call.sub_call_id, s.is_error, s.content.clone())),
        }))
    };
    (results, dispatch)
}

fn value(result: &ToolExecutionResult) -> Value {
    result.to_json()
}

#[test]
fn run_code_is_listed_for_code_and_both_after_every_tool_and_restrict_cannot_remove_it() {
    let log = Log::default();
    for (mode, listed) in [(ToolMode::Native, false), (ToolMode::Code, true), (ToolMode::Both, true)] {
        let rt = runtime(mode, None);
        let _a = rt.register(tool("a", false, Arc::clone(&log), None), None);
        let agent = ScopeKey::new("agent");
        let _own = rt.register(tool("own", false, Arc::clone(&log), None), Some(&agent));
        let names: Vec<String> = rt.schemas(Some(&agent)).into_iter().map(|s| s.name).collect();
        let mut expected = vec!["a".to_owned(), "own".to_owned()];
        if listed {
            expected.push("run_code".into());
        }
        assert_eq!(names, expected, "{mode}");
        assert_eq!(rt.get("run_code", Some(&agent)).is_some(), listed);
        assert!(rt.restrict(&agent, ToolFilter { allow: Some(vec!["run_code".into()]), deny: None }).is_err());
        let _mask = rt.restrict(&agent, ToolFilter { allow: Some(vec![]), deny: None });
        let names: Vec<String> = rt.schemas(Some(&agent)).into_iter().map(|s| s.name).collect();
        assert_eq!(names.last().map(String::as_str) == Some("run_code"), listed);
        assert!(rt.sdk_schemas(Some(&agent)).iter().all(|s| s.name != "run_code"));
    }
}

#[test]
fn the_schema_follows_the_mounted_language() {
    let rt = runtime(ToolMode::Code, None);
    let ts = rt.get("run_code", None).map(|s| s.description);
    assert!(ts.as_deref().is_some_and(|d| d.starts_with("Execute a TypeScript program")));
    let _py = rt.mount_code_runtime(Scripted::new("python"));
    let schema = rt.get("run_code", None);
    assert!(schema.as_ref().is_some_and(|s| s.description.starts_with("Execute a Python program")));
    let parameters = schema.map(|s| s.parameters.as_ref().clone()).unwrap_or_default();
    assert_eq!(parameters["properties"]["code"]["description"], "The program: the body of an async Python function.");
    assert_eq!(parameters["required"], json!(["code", "description"]));
    let ruby: Arc<dyn CodeRuntime> = Scripted::new("ruby");
    let _ruby = rt.mount_code_runtime(ruby);
    assert_eq!(
        rt.try_schemas(None).map(|_| ()).map_err(|e| e.message),
        Err("dsh-tools: no run_code schema flavor registered for runtime language \"ruby\" (known: \"typescript\", \"python\")".to_owned())
    );
}

#[test]
fn execution_checks_the_description_then_the_runtime() {
    let rt = runtime(ToolMode::Native, None);
    let agent = ScopeKey::new("a");
    let _p = rt.present_as(Some(&agent), ToolMode::Code);
    block_on(async {
        let blank = ToolExecutionInput { agent: Some(agent.clone()), ..ToolExecutionInput::new("c1", "run_code", json!({"code": "[]", "description": " \u{feff}"})) };
        let r = rt.execute(blank).await;
        assert_eq!(r.to_json()["error"]["message"], "invalid description: expected a non-empty string");
        let r = rt.execute(run_code("c2", json!([]), Some(&agent))).await;
        assert_eq!(
            r.to_json()["error"]["message"],
            "dsh-tools: mode \"native\" requires a code runtime — load a ctx.codeRuntime implementation (e.g. @deepseek-ai/dsh-code-runtime-worker-thread) or set tools mode to \"native\""
        );
        let r = rt.execute(ToolExecutionInput::new("c3", "run_code", json!({"code": "[]"}))).await;
        assert_eq!(r.error_code(), Some(&ErrorCode::UNKNOWN_TOOL), "native global view: no transport");
        let r = rt.execute(ToolExecutionInput { agent: Some(agent.clone()), ..ToolExecutionInput::new("c4", "run_code", json!({"code": "[]"})) }).await;
        assert_eq!(r.error_code(), Some(&ErrorCode::INVALID_ARGS));
    });
}

#[test]
fn sequential_calls_commit_in_order_with_the_dispatch_log() {
    let log = Log::default();
    let rt = runtime(ToolMode::Code, None);
    let _t = rt.register(tool("echo", false, Arc::clone(&log), None), None);
    let _r = rt.mount_code_runtime(Scripted::new("typescript"));
    let agent = ScopeKey::new("agent");
    let _o = observe(&rt, &log);
    let program = json!([
        {"log": "hello"},
        {"call": "echo", "args": {"v": 1}},
        {"call": "echo", "args": {"v": 2, "fail": true}},
        {"call": "nope", "args": {}},
        {"call": "echo"},
    ]);
    let result = block_on(rt.execute(run_code("rc", program, Some(&agent))));
    assert_eq!(
        value(&result)["value"],
        json!({"logs": ["hello"], "result": [
            {"ok": 1}, {"err": "echo failed"}, {"err": "TypeError: tools.nope is not a function"},
            {"err": "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)"}
        ]})
    );
    assert_eq!(result.content()[0]["text"].as_str().map(|t| t.starts_with("hello\n[\n  {\n    \"ok\": 1\n  },")), Some(true));
    assert_eq!(
        take(&log),
        [
            "dispatch-start rc:code:1 rc rc echo",
            "start echo rc:code:1",
            "end echo rc:code:1",
            "result rc:code:1 false",
            "dispatch rc:code:1 false [{\"type\":\"text\",\"text\":\"1\"}]",
            "dispatch-start rc:code:2 rc rc echo",
            "start echo rc:code:2",
            "end echo rc:code:2",
            "result rc:code:2 true",
            "dispatch rc:code:2 true [{\"type\":\"text\",\"text\":\"Error: echo failed\"}]",
            "result rc false",
        ]
    );
}

#[test]
fn no_dispatch_log_without_an_agent_and_run_failures_are_code_run_failed() {
    let log = Log::default();
    let rt = runtime(ToolMode::Code, None);
    let _t = rt.register(tool("echo", false, Arc::clone(&log), None), None);
    let _r = rt.mount_code_runtime(Scripted::new("typescript"));
    let _o = observe(&rt, &log);
    let result = block_on(rt.execute(run_code("rc", json!([{"call": "echo", "args": {}}, {"log": "a"}, {"log": "b"}, {"throw": "boom"}]), None)));
    assert_eq!(
        value(&result)["error"],
        json!({"message": "code run failed (exception): Error: boom\nCaptured output:\na\nb", "info": {"name": "CodeRunFailedError", "code": "CODE_RUN_FAILED"}})
    );
    assert_eq!(take(&log), ["start echo rc:code:1", "end echo rc:code:1", "result rc:code:1 false", "result rc true"]);
    let empty = block_on(rt.execute(run_code("rc2", json!([{"return": null}]), None)));
    assert_eq!(empty.content()[0]["text"], "null");
    let none = block_on(rt.execute(run_code("rc3", json!([{"log": ""}]), None)));
    assert_eq!(none.content()[0]["text"], "[]");
}

/// Four parallel calls under a cap of two, the later ones finishing first: at most two bodies run at
/// once, and results commit in submission order.
#[test]
fn parallel_calls_overlap_up_to_the_cap_and_commit_in_submission_order() {
    let log = Log::default();
    let rt = runtime(ToolMode::Code, Some(2.0));
    let (open, gate) = watch::channel(false);
    let _slow = rt.register(tool("slow", true, Arc::clone(&log), Some(gate)), None);
    let _fast = rt.register(tool("fast", true, Arc::clone(&log), None), None);
    let _r = rt.mount_code_runtime(Scripted::new("typescript"));
    let _o = observe(&rt, &log);
    let program = json!([{"all": [
        {"name": "slow", "args": {"v": 1}}, {"name": "fast", "args": {"v": 2}}, {"name": "fast", "args": {"v": 3}}, {"name": "fast", "args": {"v": 4}}
    ]}]);
    let result = block_on(async {
        let run = rt.execute(run_code("rc", program, None));
        let opener = async {
            for _ in 0..50 {
                tokio::task::yield_now().await;
            }
            let _ = open.send(true);
        };
        let (result, ()) = tokio::join!(run, opener);
        result
    });
    assert_eq!(value(&result)["value"]["result"], json!([{"ok": 1}, {"ok": 2}, {"ok": 3}, {"ok": 4}]));
    let events = take(&log);
    assert_eq!(
        events,
        [
            "start slow rc:code:1",
            "start fast rc:code:2",
            "end fast rc:code:2",
            "start fast rc:code:3",
            "end fast rc:code:3",
            "start fast rc:code:4",
            "end fast rc:code:4",
            "end slow rc:code:1",
            "result rc:code:1 false",
            "result rc:code:2 false",
            "result rc:code:3 false",
            "result rc:code:4 false",
            "result rc false",
        ]
    );
}

/// An exclusive call waits for the parallel ones before it, runs alone, and bars the later ones until
/// it committed.
#[test]
fn an_exclusive_call_drains_runs_alone_and_bars_later_calls() {
    let log = Log::default();
    let rt = runtime(ToolMode::Code, None);
    let _p = rt.register(tool("p", true, Arc::clone(&log), None), None);
    let _x = rt.register(tool("x", false, Arc::clone(&log), None), None);
    let _r = rt.mount_code_runtime(Scripted::new("typescript"));
    let _o = observe(&rt, &log);
    let program = json!([{"all": [
        {"name": "p", "args": {"v": 1}}, {"name": "x", "args": {"v": 2}}, {"name": "p", "args": {"v": 3}}
    ]}]);
    let result = block_on(rt.execute(run_code("rc", program, None)));
    assert!(!result.is_error());
    assert_eq!(
        take(&log),
        [
            "start p rc:code:1",
            "end p rc:code:1",
            "result rc:code:1 false",
            "start x rc:code:2",
            "end x rc:code:2",
            "result rc:code:2 false",
            "start p rc:code:3",
            "end p rc:code:3",
            "result rc:code:3 false",
            "result rc false",
        ]
    );
}

/// Aborting the transport call aborts the run (the reference's default reason), cancels the running
/// sub-call, abandons the queued one, and drains before the result.
#[test]
fn the_transport_calls_abort_reaches_the_run_and_everything_drains() {
    let log = Log::default();
    let rt = runtime(ToolMode::Code, Some(1.0));
    let (_open, gate) = watch::channel(false);
    let _slow = rt.register(tool("slow", true, Arc::clone(&log), Some(gate)), None);
    let _r = rt.mount_code_runtime(Scripted::new("typescript"));
    let _o = observe(&rt, &log);
    let program = json!([{"all": [{"name": "slow", "args": {}}, {"name": "slow", "args": {}}]}]);
    let input = run_code("rc", program, None);
    let caller = input.signal.clone();
    let result = block_on(async {
        let run = rt.execute(input);
        let abort = async {
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
            caller.cancel();
        };
        tokio::join!(run, abort).0
    });
    assert_eq!(value(&result)["error"]["message"], "code run failed (abort): AbortError: This operation was aborted");
    assert_eq!(result.error_code(), Some(&ErrorCode::CODE_RUN_FAILED));
    assert_eq!(take(&log), ["start slow rc:code:1", "end slow rc:code:1", "result rc:code:1 true", "result rc true"]);
}

/// A call the program started and never awaited is still committed before the transport's result; a
/// queued one is abandoned when the run settles.
#[test]
fn settlement_drains_started_calls() {
    let log = Log::default();
    let rt = runtime(ToolMode::Code, None);
    let _t = rt.register(tool("echo", true, Arc::clone(&log), None), None);
    let _r = rt.mount_code_runtime(Scripted::new("typescript"));
    let _o = observe(&rt, &log);
    let result = block_on(rt.execute(run_code("rc", json!([{"forget": {"name": "echo", "args": {}}}, {"return": "done"}]), None)));
    assert_eq!(value(&result)["value"], json!({"logs": [], "result": "done"}));
    let events = take(&log);
    assert_eq!(events.last().map(String::as_str), Some("result rc false"));
    assert!(events.iter().all(|e| !e.starts_with("start") || events.contains(&e.replacen("start", "end", 1))));
}

/// Keeps its binding calls (and the bindings) past the run, which a real runtime never does, so the
/// messages a late binding call gets can be read (RUN-020).
type BindingCall = dsh_tools::BoxFuture<'static, Result<Value, String>>;

struct Leaky {
    kept: Arc<Mutex<Vec<BindingCall>>>,
    bindings: Arc<Mutex<Vec<dsh_tools::code::BindingFn>>>,
}

impl CodeRuntime for Leaky {
    fn language(&self) -> &str {
        "typescript"
    }

    fn run(
        &self,
        request: dsh_tools::code::CodeRunRequest,
    ) -> dsh_tools::BoxFuture<'static, Result<dsh_tools::code::CodeRunResult, dsh_tools::code::CodeRuntimeMisuse>> {
        let functions = &request.bindings[0].functions;
        let find = |name: &str| functions.names().first(name).and_then(|position| functions.binding(position));
        let (Some(slow), Some(quick)) = (find("slow"), find("quick")) else { panic!("bindings missing") };
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.push(slow(Some(json!({}))));
        kept.push(quick(Some(json!({}))));
        self.bindings.lock().unwrap_or_else(|p| p.into_inner()).push(quick);
        Box::pin(async { Ok(dsh_tools::code::CodeRunResult { logs: vec![], value: Some(json!("done")), error: None }) })
    }
}

#[test]
fn late_binding_calls_are_told_the_run_is_over() {
    let log = Log::default();
    let rt = runtime(ToolMode::Code, Some(1.0));
    let (_open, gate) = watch::channel(false);
    let _slow = rt.register(tool("slow", true, Arc::clone(&log), Some(gate)), None);
    let _quick = rt.register(tool("quick", true, Arc::clone(&log), None), None);
    let leaky = Arc::new(Leaky { kept: Arc::default(), bindings: Arc::default() });
    let _r = rt.mount_code_runtime(Arc::clone(&leaky) as Arc<dyn CodeRuntime>);
    block_on(async {
        let result = rt.execute(run_code("rc", json!([]), None)).await;
        assert_eq!(value(&result)["value"], json!({"logs": [], "result": "done"}));
        let kept: Vec<_> = std::mem::take(&mut *leaky.kept.lock().unwrap_or_else(|p| p.into_inner()));
        let mut outcomes = Vec::new();
        for future in kept {
            outcomes.push(future.await);
        }
        assert_eq!(
            outcomes,
            [
                Err("run_code run is over (run_code settled); slow result discarded".to_owned()),
                Err("run_code run is over (run_code settled); quick tool call abandoned".to_owned()),
            ]
        );
        let quick = leaky.bindings.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let late = match quick {
            Some(quick) => quick(Some(json!({}))).await,
            None => Ok(Value::Null),
        };
        assert_eq!(late, Err("run_code run is over (run_code settled); quick not dispatched".to_owned()));
    });
    assert_eq!(take(&log), ["start slow rc:code:1", "end slow rc:code:1"]);
}

/// A reason the caller attached to the transport call's cancellation is the run's abort message
/// (RUN-032).
#[test]
fn an_attached_abort_reason_reaches_the_run() {
    let log = Log::default();
    let rt = runtime(ToolMode::Code, None);
    let (_open, gate) = watch::channel(false);
    let _slow = rt.register(tool("slow", true, Arc::clone(&log), Some(gate)), None);
    let _r = rt.mount_code_runtime(Scripted::new("typescript"));
    let token = Arc::new(Mutex::new(None));
    let _capture = {
        let token = Arc::clone(&token);
        rt.on_pre_execute(
            None,
            dsh_tools::pre_execute_fn(move |exec, next| {
                if exec.call_id == "rc" {
                    *token.lock().unwrap_or_else(|p| p.into_inner()) = Some(exec.token);
                }
                next.run()
            }),
        )
    };
    let input = run_code("rc", json!([{"call": "slow", "args": {}}]), None);
    let caller = input.signal.clone();
    let result = block_on(async {
        let abort = async {
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
            if let Some(token) = *token.lock().unwrap_or_else(|p| p.into_inner()) {
                rt.set_abort_reason(token, "stop");
            }
            caller.cancel();
        };
        tokio::join!(rt.execute(input), abort).0
    });
    assert_eq!(value(&result)["error"]["message"], "code run failed (abort): stop");
}
