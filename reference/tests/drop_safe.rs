//! Dropping the future of `ToolRuntime::execute` after it started — under `tokio::time::timeout`, in a
//! `select!`, outside any runtime — never drops the tool body: the execution runs on, the content
//! finalizer runs and the `tools/result` observers see the one result. A future never polled starts
//! nothing.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::Duration;

use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolExecutionInput, ToolExecutionResult, ToolRuntime, ToolsConfig};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

/// What one test observes: bodies started and finished, finalizer runs, and published results.
struct Probe {
    started: AtomicUsize,
    finished: AtomicUsize,
    finalized: AtomicUsize,
    release: Notify,
}

/// Each published result: the call id and the result's JSON.
type Published = mpsc::UnboundedReceiver<(String, Value)>;
/// The registration and observer guards, kept alive for the test.
type Guards = Vec<Box<dyn std::any::Any>>;

fn runtime_with_gated_tool() -> (ToolRuntime, Arc<Probe>, Published, Guards) {
    let rt = ToolRuntime::new(ToolsConfig::default());
    let probe = Arc::new(Probe { started: AtomicUsize::new(0), finished: AtomicUsize::new(0), finalized: AtomicUsize::new(0), release: Notify::new() });
    let body_probe = Arc::clone(&probe);
    let mut tool = ToolDefinition::new(
        "gated",
        "waits until released",
        Parameters::Raw(json!({"type": "object"})),
        OutputDeclaration {
            schema: json!({"type": "string"}),
            render: Arc::new(|_, v| Ok(vec![json!({"type": "text", "text": v})])),
            presentation_meta: None,
        },
        Arc::new(move |_, _| {
            let probe = Arc::clone(&body_probe);
            Box::pin(async move {
                probe.started.fetch_add(1, Ordering::SeqCst);
                probe.release.notified().await;
                probe.finished.fetch_add(1, Ordering::SeqCst);
                Ok(json!("done"))
            })
        }),
    );
    let finalize_probe = Arc::clone(&probe);
    tool.finalize_content = Some(Arc::new(move |_, _| {
        finalize_probe.finalized.fetch_add(1, Ordering::SeqCst);
        Ok(Some(vec![json!({"type": "text", "text": "finalized"})]))
    }));
    let registration = rt.register(tool, None).unwrap();
    let (sender, receiver) = mpsc::unbounded_channel();
    let observer = rt.on_result(Arc::new(move |exec, result: &ToolExecutionResult| {
        let _ = sender.send((exec.call_id.clone(), result.to_json()));
    }));
    (rt, probe, receiver, vec![Box::new(registration), Box::new(observer)])
}

fn call(id: &str) -> ToolExecutionInput {
    ToolExecutionInput::new(id, "gated", json!({}))
}

async fn wait_started(probe: &Probe, count: usize) {
    while probe.started.load(Ordering::SeqCst) < count {
        tokio::task::yield_now().await;
    }
}

fn assert_published(published: &(String, Value), id: &str) {
    assert_eq!(published.0, id);
    assert_eq!(published.1["isError"], json!(false), "{}", published.1);
    assert_eq!(published.1["content"], json!([{"type": "text", "text": "finalized"}]));
}

#[test]
fn a_timed_out_execution_runs_on_under_a_multi_thread_runtime() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (rt, probe, mut results, _guards) = runtime_with_gated_tool();
    runtime.block_on(async {
        let timed = tokio::time::timeout(Duration::from_millis(20), rt.execute(call("timed"))).await;
        assert!(timed.is_err(), "the gated body cannot finish before it is released");
        assert_eq!((probe.started.load(Ordering::SeqCst), probe.finished.load(Ordering::SeqCst)), (1, 0));
        assert!(results.try_recv().is_err(), "nothing is published before the body ends");
        probe.release.notify_one();
        let published = tokio::time::timeout(Duration::from_secs(10), results.recv()).await.unwrap().unwrap();
        assert_published(&published, "timed");
    });
    assert_eq!((probe.finished.load(Ordering::SeqCst), probe.finalized.load(Ordering::SeqCst)), (1, 1));
}

#[test]
fn a_select_loser_runs_on_under_a_current_thread_runtime() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (rt, probe, mut results, _guards) = runtime_with_gated_tool();
    runtime.block_on(async {
        tokio::select! {
            _ = rt.execute(call("loser")) => panic!("the gated body cannot finish first"),
            () = wait_started(&probe, 1) => {}
        }
        probe.release.notify_one();
        let published = tokio::time::timeout(Duration::from_secs(10), results.recv()).await.unwrap().unwrap();
        assert_published(&published, "loser");
        assert!(results.try_recv().is_err(), "exactly one result");
    });
    assert_eq!(probe.finalized.load(Ordering::SeqCst), 1);
}

#[test]
fn a_future_dropped_outside_any_runtime_finishes_on_a_helper_thread() {
    let (rt, probe, mut results, _guards) = runtime_with_gated_tool();
    {
        let mut future = pin!(rt.execute(call("orphan")));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(future.as_mut().poll(&mut cx).is_pending());
        assert_eq!(probe.started.load(Ordering::SeqCst), 1);
    }
    probe.release.notify_one();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let published = loop {
        match results.try_recv() {
            Ok(published) => break published,
            Err(_) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => panic!("no result published within 10 s: {e}"),
        }
    };
    assert_published(&published, "orphan");
    assert_eq!(probe.finished.load(Ordering::SeqCst), 1);
}

#[test]
fn a_future_never_polled_starts_nothing() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (rt, probe, mut results, _guards) = runtime_with_gated_tool();
    runtime.block_on(async {
        drop(rt.execute(call("unpolled")));
        tokio::time::sleep(Duration::from_millis(20)).await;
    });
    assert_eq!(probe.started.load(Ordering::SeqCst), 0);
    assert!(results.try_recv().is_err());
}
