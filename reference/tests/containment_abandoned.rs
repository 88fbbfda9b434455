//! Abandoned TypeScript runs are bounded in count (`code/typescript/pool.rs`): a run whose caller was
//! answered by the wall backstop while its thread is stuck in a step the engine cannot interrupt keeps that
//! thread and up to its heap cap until the step ends; a new run starts only while fewer than
//! `MAX_ABANDONED_RUNS` such runs exist, so the host holds at most that many beyond the runs its callers
//! await.
//!
//! The uninterruptible step is made deterministic here: a binding whose future blocks the run thread in
//! `poll` for [`STALL`] (what a long QuickJS built-in such as `"r".repeat(80 * 2 ** 20)` does with CPU,
//! this does with a sleep, so the test burns no core and takes the same time in debug and release).
//! Own test binary: the count is process-wide.
//!
//! Spec: RUN-028 (wall ceiling: the caller is answered at the ceiling plus the backstop), RUN-031 (what a
//! program makes the host hold is bounded).

#![cfg(feature = "typescript")]
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_tools::code::typescript::{abandoned_runs, TypeScriptRuntime, MAX_ABANDONED_RUNS};
use dsh_tools::code::{CodeBindingNamespace, CodeRunErrorKind, CodeRunRequest, CodeRuntime, CodeRuntimeLimits, RunSignal};
use serde_json::{json, Value};

/// How long the stalling binding blocks the run thread.
const STALL: Duration = Duration::from_millis(1500);
/// The runs' wall ceiling: the backstop answers at this plus 250 ms, long before the stall ends.
const WALL: Duration = Duration::from_millis(100);

fn stalling_tools() -> CodeBindingNamespace {
    CodeBindingNamespace {
        global: "tools".to_owned(),
        functions: vec![(
            "stall".to_owned(),
            Arc::new(|_: Option<Value>| {
                Box::pin(async move {
                    // Blocks the run thread inside `poll`: nothing the engine checks runs meanwhile.
                    std::thread::sleep(STALL);
                    Ok(json!({}))
                }) as dsh_tools::BoxFuture<'static, Result<Value, String>>
            }) as dsh_tools::code::BindingFn,
        )]
        .into(),
        error_class: None,
    }
}

fn request(program: &str) -> CodeRunRequest {
    CodeRunRequest { program: program.to_owned(), bindings: vec![stalling_tools()], signal: RunSignal::new(), state_owner: None }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_runs_are_bounded_in_count() {
    let limits = CodeRuntimeLimits::default().with_max_wall(WALL).with_max_heap_bytes(32 << 20);
    let runtime = TypeScriptRuntime::new(limits).unwrap();
    // A run answered in time leaves nothing behind.
    let first = runtime.run(request("return 0;")).await.unwrap();
    assert_eq!(first.value, Some(json!(0)));
    assert_eq!(abandoned_runs(), 0);
    // Sequential callers: each is answered by the backstop while its run thread sleeps in the binding.
    let mut counts = Vec::new();
    let mut started = Vec::new();
    for i in 0..MAX_ABANDONED_RUNS + 2 {
        let at = Instant::now();
        let result = runtime.run(request("await tools.stall({}); return 1;")).await.unwrap();
        let error = result.error.expect("the backstop answers before the stall ends");
        assert_eq!(error.kind, CodeRunErrorKind::Timeout, "{}", error.message);
        // Past the bound a run is not started, and its answer says so rather than looking like its own timeout.
        let expected = if i < MAX_ABANDONED_RUNS {
            "wall-clock ceiling reached (100ms)".to_owned()
        } else {
            format!(
                "wall-clock ceiling reached (100ms) before the run started: {MAX_ABANDONED_RUNS} earlier runs abandoned at their wall ceilings still hold their threads"
            )
        };
        assert_eq!(error.message, expected, "run {i}");
        assert!(at.elapsed() < WALL + Duration::from_millis(1000), "answered after {:?}", at.elapsed());
        counts.push(abandoned_runs());
        started.push(at);
    }
    eprintln!("abandoned after each answer: {counts:?}");
    // Never more than the bound: the runs past it waited for a slot and were answered without starting
    // (their wall ceiling counts from the request), so they left no thread behind.
    assert!(counts.iter().all(|&c| c <= MAX_ABANDONED_RUNS), "abandoned runs {counts:?} passed {MAX_ABANDONED_RUNS}");
    assert_eq!(counts[MAX_ABANDONED_RUNS - 1], MAX_ABANDONED_RUNS, "the first runs are abandoned: {counts:?}");
    // Once the stalls end the abandoned runs finish, and a run starts and completes at once.
    let deadline = Instant::now() + STALL * 4;
    while abandoned_runs() > 0 {
        assert!(Instant::now() < deadline, "abandoned runs never finished: {}", abandoned_runs());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let done = runtime.run(request("return 2;")).await.unwrap();
    assert!(done.error.is_none(), "{:?}", done.error);
    assert_eq!(done.value, Some(json!(2)));
}
