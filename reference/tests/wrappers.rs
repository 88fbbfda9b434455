//! The ready-made wrappers over a real runtime, on tokio's paused clock: the timeout policy's
//! cooperative deadline (upstream `dsh-tool-call-timeout-policy` texts and codes), its opt-in hard bound,
//! pass-through cases, and the concurrency limit.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_tools::wrappers::{ConcurrencyLimit, TimeoutPolicy};
use dsh_tools::{ErrorCode, OutputDeclaration, Parameters, ToolDefinition, ToolExecutionInput, ToolFailure, ToolRuntime, ToolsConfig};
use serde_json::json;
use tokio::time::Instant;

#[derive(Clone, Copy)]
enum Body {
    /// Sleeps `ms`, ignoring its signal.
    Ignores(u64),
    /// Returns as soon as its signal is cancelled (or after `ms`).
    Honours(u64),
    /// Waits for its signal, then throws.
    ThrowsOnCancel,
}

fn tool(name: &str, timeout_ms: Option<f64>, body: Body, finished: Arc<AtomicUsize>) -> ToolDefinition {
    let mut def = ToolDefinition::new(
        name,
        "test tool",
        Parameters::Raw(json!({"type": "object"})),
        OutputDeclaration { schema: json!({"type": "string"}), render: Arc::new(|_, v| Ok(vec![json!({"type": "text", "text": v})])), presentation_meta: None },
        Arc::new(move |_, ctx| {
            let finished = Arc::clone(&finished);
            Box::pin(async move {
                let outcome = match body {
                    Body::Ignores(ms) => {
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        Ok(json!("slow"))
                    }
                    Body::Honours(ms) => {
                        tokio::select! {
                            () = ctx.signal().cancelled() => Ok(json!("stopped")),
                            () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(json!("fast")),
                        }
                    }
                    Body::ThrowsOnCancel => {
                        ctx.signal().cancelled().await;
                        Err(ToolFailure::message("provider aborted"))
                    }
                };
                finished.fetch_add(1, Ordering::SeqCst);
                outcome
            })
        }),
    );
    def.timeout_ms = timeout_ms;
    def
}

fn timed_out(ms: &str) -> serde_json::Value {
    json!({
        "isError": true,
        "error": {"message": format!("tool call timed out after {ms}ms"), "info": {"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT"}},
        "content": [{"type": "text", "text": format!("Error: tool call timed out after {ms}ms")}],
    })
}

#[tokio::test(start_paused = true)]
async fn a_cooperative_tool_times_out_at_its_deadline() {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let finished = Arc::new(AtomicUsize::new(0));
    let _t = rt.register(tool("t", Some(200.0), Body::Honours(10_000), Arc::clone(&finished)), None).unwrap();
    let _p = TimeoutPolicy::new().install(&rt, None);
    let start = Instant::now();
    let result = rt.execute(ToolExecutionInput::new("c", "t", json!({}))).await;
    assert_eq!(result.to_json(), timed_out("200"));
    assert_eq!(start.elapsed(), Duration::from_millis(200));
    assert_eq!(finished.load(Ordering::SeqCst), 1, "the body ran to its end");
}

#[tokio::test(start_paused = true)]
async fn a_tool_ignoring_its_signal_is_awaited_then_replaced_unless_hard() {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let finished = Arc::new(AtomicUsize::new(0));
    let _t = rt.register(tool("t", Some(200.5), Body::Ignores(1_500), Arc::clone(&finished)), None).unwrap();
    let policy = TimeoutPolicy::new().install(&rt, None);
    let start = Instant::now();
    let result = rt.execute(ToolExecutionInput::new("c", "t", json!({}))).await;
    assert_eq!(result.to_json(), timed_out("200.5"));
    assert_eq!(start.elapsed(), Duration::from_millis(1_500), "cooperative: never raced");
    assert_eq!(finished.load(Ordering::SeqCst), 1);
    drop(policy);
    let _hard = TimeoutPolicy::new().hard(Duration::from_millis(50)).install(&rt, None);
    let start = Instant::now();
    let result = rt.execute(ToolExecutionInput::new("c2", "t", json!({}))).await;
    assert_eq!(result.error_code(), Some(&ErrorCode::TOOL_TIMEOUT));
    // Deadline 200.5 ms plus 50 ms grace; tokio's timer wheel rounds up to whole milliseconds.
    assert!((Duration::from_micros(250_500)..=Duration::from_millis(252)).contains(&start.elapsed()), "{:?}", start.elapsed());
    assert_eq!(finished.load(Ordering::SeqCst), 1, "the hard bound dropped the second body");
}

#[tokio::test(start_paused = true)]
async fn fast_undeclared_and_caller_cancelled_calls_pass_through() {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let finished = Arc::new(AtomicUsize::new(0));
    let _a = rt.register(tool("fast", Some(200.0), Body::Honours(50), Arc::clone(&finished)), None).unwrap();
    let _b = rt.register(tool("undeclared", None, Body::Ignores(500), Arc::clone(&finished)), None).unwrap();
    let _c = rt.register(tool("cancelled", Some(200.0), Body::Honours(10_000), Arc::clone(&finished)), None).unwrap();
    let _p = TimeoutPolicy::new().install(&rt, None);
    let fast = rt.execute(ToolExecutionInput::new("1", "fast", json!({}))).await;
    assert_eq!(fast.to_json()["value"], json!("fast"));
    let undeclared = rt.execute(ToolExecutionInput::new("2", "undeclared", json!({}))).await;
    assert_eq!(undeclared.to_json()["value"], json!("slow"));
    let input = ToolExecutionInput::new("3", "cancelled", json!({}));
    let caller = input.signal.clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        caller.cancel();
    });
    let cancelled = rt.execute(input).await;
    canceller.await.unwrap();
    assert_eq!(cancelled.error_code(), Some(&ErrorCode::ABORTED), "the caller's cancellation came first");
}

#[tokio::test(start_paused = true)]
async fn a_body_failure_after_the_deadline_becomes_the_timeout() {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let _t = rt.register(tool("t", Some(30.0), Body::ThrowsOnCancel, Arc::new(AtomicUsize::new(0))), None).unwrap();
    let _p = TimeoutPolicy::new().install(&rt, None);
    let result = rt.execute(ToolExecutionInput::new("c", "t", json!({}))).await;
    assert_eq!(result.to_json(), timed_out("30"));
}

#[tokio::test(start_paused = true)]
async fn the_limit_bounds_overlap_and_releases_cancelled_waiters() {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r, p) = (Arc::clone(&running), Arc::clone(&peak));
    let def = ToolDefinition::new(
        "busy",
        "d",
        Parameters::Raw(json!({"type": "object"})),
        OutputDeclaration { schema: json!({}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
        Arc::new(move |_, _| {
            let (running, peak) = (Arc::clone(&r), Arc::clone(&p));
            Box::pin(async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(100)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(json!(null))
            })
        }),
    );
    let _t = rt.register(def, None).unwrap();
    let limit = ConcurrencyLimit::new(2);
    let _l = limit.install(&rt, None);
    let start = Instant::now();
    let call = |id: String| {
        let rt = rt.clone();
        async move { rt.execute(ToolExecutionInput::new(id, "busy", json!({}))).await }
    };
    let calls = (0..5).map(|i| call(format!("c{i}")));
    let results = futures_join_all(calls.collect()).await;
    assert!(results.iter().all(|r| !r.is_error()));
    assert_eq!(peak.load(Ordering::SeqCst), 2);
    assert_eq!(start.elapsed(), Duration::from_millis(300), "five 100 ms calls, two at a time");
    assert_eq!(limit.available(), 2);
    // A waiter cancelled while the pool is full does not wait for a permit.
    let holders: Vec<_> = (0..2).map(|i| call(format!("h{i}"))).collect();
    let waiter = ToolExecutionInput::new("w", "busy", json!({}));
    waiter.signal.cancel();
    let (waited, _) = tokio::join!(rt.execute(waiter), futures_join_all(holders));
    assert_eq!(waited.error_code(), Some(&ErrorCode::ABORTED_BEFORE_DISPATCH));
}

/// Await every future concurrently, results in input order (no `futures` dependency for one helper).
async fn futures_join_all<F: std::future::Future + Send + 'static>(futures: Vec<F>) -> Vec<F::Output>
where
    F::Output: Send,
{
    let mut set = Vec::new();
    for future in futures {
        set.push(tokio::spawn(future));
    }
    let mut out = Vec::new();
    for handle in set {
        out.push(handle.await.unwrap());
    }
    out
}
