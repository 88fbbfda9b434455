//! Pipeline and validation benchmarks; one JSON object per line, `{"figure", "n", "median_us"}`, with the
//! figure names and workloads of `shared/tools/bench/upstream-bench.mjs`: warmup, then 7 rounds; the figure
//! is the median round's per-call µs. A round is [`ROUND`] calls (upstream's rounds are 5,000): at under a
//! microsecond a call, 5,000-call rounds put all seven inside ~25 ms, where one stall of a shared VM's
//! vCPU moved the median by half; 50,000-call rounds spread them over a quarter of a second.
//! - `execute_seq_noop_per_call`: sequential executes of the echo tool;
//! - `execute_seq_3hooks_per_call`: plus a pass-through pre-execute listener, a guard returning none and a
//!   pass-through post-execute listener (upstream's `(_e, d) => d` and `(_e, _r, d) => d`; here each
//!   returns `next.run()`, the chain's own boxed future, as the listeners' docs advise);
//! - ours only, with no upstream counterpart: `execute_seq_pre_execute_only_per_call`,
//!   `execute_seq_guard_only_per_call`, `execute_seq_post_execute_only_per_call` (one of those hooks each,
//!   so what each costs shows beside the noop figure);
//! - `execute_concurrent100_per_call`: batches of 100 executes awaited together;
//! - `validate_20item_value_per_call`.
//!
//! Arguments that do not start with `--` filter the figures by substring (`cargo bench --bench pipeline --
//! validate` runs the validation figure alone, e.g. under a profiler).
//!
//! Spec: none (performance anchors, see DESIGN.md); the workloads exercise PIPE-001's stage order.

#![allow(missing_docs)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use dsh_tools::{
    ToolExecutionInput, ToolRuntime, ToolsConfig,
    validate_json_schema_value,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

mod common;

use common::{echo, report};

/// Calls per round (and per warm-up).
const ROUND: usize = 50_000;

/// The call upstream's bench makes: `{ signal: sig, callId, name: 'echo', arguments: { text: 'x' } }`
/// (the caller's one signal, so no fresh token per call).
fn input(call_id: String, signal: &CancellationToken) -> ToolExecutionInput {
    ToolExecutionInput {
        call_id,
        name: "echo".to_owned(),
        arguments: json!({"text": "x"}),
        signal: signal.clone(),
        agent: None,
        parent: None,
        root_call_id: None,
    }
}

async fn seq(rt: &ToolRuntime, signal: &CancellationToken, n: usize) {
    for k in 0..n {
        let _ = rt.execute(input(format!("c{k}"), signal)).await;
    }
}

/// Await every future together in one task (upstream's `Promise.all` over eagerly started executions).
struct JoinAll<F: Future> {
    pending: Vec<Option<Pin<Box<F>>>>,
    left: usize,
}

impl<F: Future> Future for JoinAll<F> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        for slot in &mut this.pending {
            if let Some(future) = slot {
                if future.as_mut().poll(cx).is_ready() {
                    *slot = None;
                    this.left -= 1;
                }
            }
        }
        if this.left == 0 { Poll::Ready(()) } else { Poll::Pending }
    }
}

/// `n` executes, in batches of 100 awaited together.
async fn concurrent(rt: &ToolRuntime, signal: &CancellationToken, n: usize, next_id: &mut usize) {
    for _ in 0..n / 100 {
        let pending: Vec<_> = (0..100)
            .map(|_| {
                let call = input(format!("c{next_id}"), signal);
                *next_id += 1;
                Some(Box::pin(rt.execute(call)))
            })
            .collect();
        JoinAll { left: pending.len(), pending }.await;
    }
}

/// Which of upstream's three pass-through hooks a sequential figure registers.
struct Hooks {
    pre: bool,
    guard: bool,
    post: bool,
}

/// Whether the figure `name` was asked for: no filter, or a filter argument it contains.
fn wanted(name: &str) -> bool {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

fn main() {
    let Ok(tokio) = tokio::runtime::Builder::new_current_thread().build() else { return };
    let signal = CancellationToken::new();
    // Upstream's two sequential figures, then (ours only) one hook at a time, so the cost of each shows.
    let sequential = [
        ("execute_seq_noop_per_call", Hooks { pre: false, guard: false, post: false }),
        ("execute_seq_3hooks_per_call", Hooks { pre: true, guard: true, post: true }),
        ("execute_seq_pre_execute_only_per_call", Hooks { pre: true, guard: false, post: false }),
        ("execute_seq_guard_only_per_call", Hooks { pre: false, guard: true, post: false }),
        ("execute_seq_post_execute_only_per_call", Hooks { pre: false, guard: false, post: true }),
    ];
    for (figure, hooks) in sequential {
        if !wanted(figure) {
            continue;
        }
        let rt = ToolRuntime::new(ToolsConfig::default());
        let _reg = rt.register(echo(), None);
        let _hooks = (
            hooks.pre.then(|| rt.on_pre_execute(None, dsh_tools::pre_execute_fn(|_, next| next.run()))),
            hooks.guard.then(|| rt.guard(None, Arc::new(|_| None))),
            hooks.post.then(|| rt.on_post_execute(None, dsh_tools::post_execute_fn(|_, _, next| next.run()))),
        );
        let n = ROUND;
        tokio.block_on(seq(&rt, &signal, ROUND));
        let samples = (0..7)
            .map(|_| {
                let t0 = Instant::now();
                tokio.block_on(seq(&rt, &signal, n));
                t0.elapsed().as_secs_f64() * 1e6 / n as f64
            })
            .collect();
        report(figure, n, samples);
    }
    if wanted("execute_concurrent100_per_call") {
        let rt = ToolRuntime::new(ToolsConfig::default());
        let _reg = rt.register(echo(), None);
        let mut next_id = 0;
        tokio.block_on(concurrent(&rt, &signal, ROUND, &mut next_id));
        let n = ROUND;
        let samples = (0..7)
            .map(|_| {
                let t0 = Instant::now();
                tokio.block_on(concurrent(&rt, &signal, n, &mut next_id));
                t0.elapsed().as_secs_f64() * 1e6 / n as f64
            })
            .collect();
        report("execute_concurrent100_per_call", n, samples);
    }
    if !wanted("validate_20item_value_per_call") {
        return;
    }
    let schema = json!({"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"items":{"type":"array","items":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"string","enum":["x","y"]}},"required":["a"]}}},"required":["path"]});
    let items: Vec<Value> = (0..20).map(|k| json!({"a": k, "b": "x"})).collect();
    let value = json!({"path": "/a/b", "limit": 10, "items": items});
    let n = ROUND;
    for _ in 0..n {
        std::hint::black_box(validate_json_schema_value(&schema, &value, "value"));
    }
    let samples = (0..7)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..n {
                std::hint::black_box(validate_json_schema_value(&schema, &value, "value"));
            }
            t0.elapsed().as_secs_f64() * 1e6 / n as f64
        })
        .collect();
    report("validate_20item_value_per_call", n, samples);
}
