//! The turn executor over a real runtime, on tokio's paused clock: policy and commits in model order,
//! overlapping parallel dispatches bounded by the cap, an exclusive call as a barrier, contexts in
//! model order.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_tools::turn::TurnExecutor;
use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolExecutionInput, ToolRuntime, ToolsConfig, pre_execute_fn};
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, entry: String) {
    log.lock().unwrap().push(entry);
}

/// A tool sleeping `args.ms`, logging its body start and end, deferring one context; `parallel`
/// declares it concurrency-safe.
fn tool(name: &str, parallel: bool, log: &Log, running: &Arc<AtomicUsize>, peak: &Arc<AtomicUsize>) -> ToolDefinition {
    let (log, running, peak) = (Arc::clone(log), Arc::clone(running), Arc::clone(peak));
    let mut def = ToolDefinition::new(
        name,
        "d",
        Parameters::Raw(json!({"type": "object"})),
        OutputDeclaration { schema: json!({}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
        Arc::new(move |args, ctx| {
            let (log, running, peak) = (Arc::clone(&log), Arc::clone(&running), Arc::clone(&peak));
            Box::pin(async move {
                peak.fetch_max(running.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                push(&log, format!("start:{}", ctx.call_id()));
                tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0))).await;
                push(&log, format!("end:{}", ctx.call_id()));
                ctx.defer_context(json!({"from": ctx.call_id()}));
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(Value::Null)
            })
        }),
    );
    if parallel {
        def.is_concurrency_safe = Some(Arc::new(|_| Ok(true)));
    }
    def
}

struct Fixture {
    runtime: ToolRuntime,
    log: Log,
    peak: Arc<AtomicUsize>,
    _guards: Vec<Box<dyn std::any::Any>>,
}

fn fixture() -> Fixture {
    let runtime = ToolRuntime::new(ToolsConfig::default());
    let log: Log = Arc::default();
    let (running, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let read = runtime.register(tool("read", true, &log, &running, &peak), None).unwrap();
    let write = runtime.register(tool("write", false, &log, &running, &peak), None).unwrap();
    let policy_log = Arc::clone(&log);
    let policy = runtime.on_pre_execute(
        None,
        pre_execute_fn(move |exec, next| {
            push(&policy_log, format!("policy:{}", exec.call_id));
            next.run()
        }),
    );
    let result_log = Arc::clone(&log);
    let results = runtime.on_result(Arc::new(move |exec, _| push(&result_log, format!("result:{}", exec.call_id))));
    Fixture { runtime, log, peak, _guards: vec![Box::new(read), Box::new(write), Box::new(policy), Box::new(results)] }
}

fn call(id: &str, name: &str, ms: u64) -> ToolExecutionInput {
    ToolExecutionInput::new(id, name, json!({"ms": ms}))
}

fn position(log: &[String], entry: &str) -> usize {
    log.iter().position(|e| e == entry).unwrap_or_else(|| panic!("{entry} missing from {log:?}"))
}

#[tokio::test(start_paused = true)]
async fn parallel_calls_overlap_an_exclusive_call_is_a_barrier_and_order_is_kept() {
    let f = fixture();
    let calls = vec![call("a", "read", 30), call("b", "read", 10), call("x", "write", 5), call("c", "read", 5), call("d", "read", 1)];
    let turn = TurnExecutor::new(&f.runtime).execute(calls).await;
    let log = f.log.lock().unwrap().clone();
    let ids: Vec<&str> = turn.results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "x", "c", "d"]);
    assert!(turn.results.iter().all(|(_, r)| !r.is_error()));
    let of = |kind: &str| -> Vec<String> { log.iter().filter(|e| e.starts_with(kind)).cloned().collect() };
    assert_eq!(of("policy:"), ["policy:a", "policy:b", "policy:x", "policy:c", "policy:d"]);
    assert_eq!(of("result:"), ["result:a", "result:b", "result:x", "result:c", "result:d"], "{log:?}");
    assert!(position(&log, "start:b") < position(&log, "end:a"), "a and b overlap: {log:?}");
    assert!(position(&log, "end:b") < position(&log, "end:a"), "b finished first but committed second: {log:?}");
    assert!(position(&log, "result:b") < position(&log, "policy:x"), "the barrier waits for every earlier commit: {log:?}");
    assert!(position(&log, "result:x") < position(&log, "policy:c"), "nothing starts before the barrier committed: {log:?}");
    let contexts: Vec<&Value> = turn.contexts().collect();
    assert_eq!(contexts, [&json!({"from": "a"}), &json!({"from": "b"}), &json!({"from": "x"}), &json!({"from": "c"}), &json!({"from": "d"})]);
    assert_eq!(f.peak.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn the_pool_is_bounded_and_rolls() {
    let f = fixture();
    let calls: Vec<_> = (0..6).map(|i| call(&format!("r{i}"), "read", 100)).collect();
    let start = tokio::time::Instant::now();
    let turn = TurnExecutor::new(&f.runtime).max_parallel(3).execute(calls).await;
    assert_eq!(turn.results.len(), 6);
    assert_eq!(f.peak.load(Ordering::SeqCst), 3);
    assert_eq!(start.elapsed(), Duration::from_millis(200), "six 100 ms calls, three at a time");
    let f = fixture();
    let serial: Vec<_> = (0..3).map(|i| call(&format!("s{i}"), "read", 10)).collect();
    TurnExecutor::new(&f.runtime).max_parallel(1).execute(serial).await;
    assert_eq!(f.peak.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn failures_and_unknown_tools_keep_their_place() {
    let f = fixture();
    let calls = vec![call("a", "read", 10), call("u", "missing", 0), ToolExecutionInput::new("bad", "read", json!(5)), call("b", "read", 1)];
    let turn = TurnExecutor::new(&f.runtime).execute(calls).await;
    let summary: Vec<(&str, bool)> = turn.results.iter().map(|(id, r)| (id.as_str(), r.is_error())).collect();
    assert_eq!(summary, [("a", false), ("u", true), ("bad", false), ("b", false)]);
    assert_eq!(turn.results[1].1.error_code().map(|c| c.as_str()), Some("UNKNOWN_TOOL"));
}

#[tokio::test(start_paused = true)]
async fn a_dropped_turn_runs_on_to_every_result() {
    let f = fixture();
    let calls = vec![call("a", "read", 30), call("x", "write", 10), call("b", "read", 5)];
    let executor = TurnExecutor::new(&f.runtime);
    let timed = tokio::time::timeout(Duration::from_millis(15), executor.execute(calls)).await;
    assert!(timed.is_err(), "the turn needs 45 ms");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let log = f.log.lock().unwrap().clone();
    let results: Vec<&String> = log.iter().filter(|e| e.starts_with("result:")).collect();
    assert_eq!(results, ["result:a", "result:x", "result:b"], "{log:?}");
}

/// An executor that passes every call through but declares its routes as told (CDM-047).
struct Routing(fn(&ToolExecutionInput) -> dsh_tools::ExecutorRoute);

impl dsh_tools::ToolExecutor for Routing {
    fn describe(&self, definitions: Vec<dsh_tools::definition::ToolSchema>) -> Vec<dsh_tools::definition::ToolSchema> {
        definitions
    }

    fn route(&self, input: &ToolExecutionInput) -> dsh_tools::ExecutorRoute {
        (self.0)(input)
    }

    fn execute(&self, input: ToolExecutionInput, native: dsh_tools::NativeExecutor) -> dsh_tools::BoxFuture<'static, dsh_tools::ToolExecutionResult> {
        native.execute(input)
    }
}

/// Under an executor, the calls it routes `Native` keep the native lanes (two safe reads overlap, the
/// write is a barrier), and with the default route every call is a barrier; `execution_mode` follows.
#[tokio::test(start_paused = true)]
async fn an_executor_keeps_parallel_dispatch_for_the_calls_it_routes_native() {
    use dsh_tools::{ExecutionMode, ExecutorRoute, ScopeKey};
    for (route, peak) in [
        (Routing(|_| ExecutorRoute::Native), 2),
        (Routing(|_| ExecutorRoute::Own(ExecutionMode::Exclusive)), 1),
        (Routing(|i| if i.name == "read" { ExecutorRoute::Own(ExecutionMode::Parallel) } else { ExecutorRoute::Native }), 2),
    ] {
        let f = fixture();
        let preset = ScopeKey::new("preset");
        let agent = ScopeKey::child("agent", &preset);
        let _executor = f.runtime.set_executor(Some(&preset), Arc::new(route)).unwrap();
        let calls: Vec<ToolExecutionInput> =
            [call("a", "read", 30), call("b", "read", 10), call("x", "write", 5)].into_iter().map(|c| c.with_agent(&agent)).collect();
        let modes: Vec<ExecutionMode> = calls.iter().map(|c| f.runtime.execution_mode(c)).collect();
        let turn = TurnExecutor::new(&f.runtime).execute(calls).await;
        let log = f.log.lock().unwrap().clone();
        let ids: Vec<&str> = turn.results.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "x"]);
        assert_eq!(f.peak.load(Ordering::SeqCst), peak, "{log:?}");
        let parallel = if peak == 2 { ExecutionMode::Parallel } else { ExecutionMode::Exclusive };
        assert_eq!(modes, [parallel, parallel, ExecutionMode::Exclusive]);
        assert!(position(&log, "result:b") < position(&log, "start:x"), "the write stays a barrier: {log:?}");
    }
}
