//! Bodies that ignore cancellation: `ToolRuntime::in_flight` lists them (also after their `execute`
//! future was dropped), `abandon` drops one (`ABORTED`), and the body ceiling bounds every body
//! (`TOOL_TIMEOUT`), by default 15 minutes; a body ready at once is never listed.
#![cfg(feature = "typed")]
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_tools::bodies::DEFAULT_BODY_CEILING;
use dsh_tools::typed::{JsonSchema, tool};
use dsh_tools::{CancellationToken, ErrorCode, ToolExecutionInput, ToolRuntime, result_observer_fn};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

/// A runtime with `stuck` (never returns, never looks at its signal) and `quick`.
fn runtime() -> (ToolRuntime, Vec<dsh_tools::Registration>) {
    let rt = ToolRuntime::new(Default::default());
    let stuck = tool("stuck", "Never returns", |_: Empty, _ctx| async move {
        std::future::pending::<()>().await;
        Ok(())
    })
    .unwrap();
    let quick = tool("quick", "Returns at once", |_: Empty, _ctx| async move { Ok("done") }).unwrap();
    let registrations = vec![rt.register(stuck, None).unwrap(), rt.register(quick, None).unwrap()];
    (rt, registrations)
}

async fn until_listed(rt: &ToolRuntime, n: usize) -> Vec<dsh_tools::InFlightBody> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let listed = rt.in_flight();
        if listed.len() == n || Instant::now() > deadline {
            return listed;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test]
async fn a_body_ignoring_its_cancelled_signal_is_listed_and_can_be_abandoned() {
    let (rt, _tools) = runtime();
    assert_eq!(rt.body_ceiling(), Some(DEFAULT_BODY_CEILING));
    let signal = CancellationToken::new();
    let call = rt.execute(ToolExecutionInput::new("c1", "stuck", json!({})).with_signal(signal.clone()));
    let (result, ()) = tokio::join!(call, async {
        let listed = until_listed(&rt, 1).await;
        assert_eq!((listed[0].call_id.as_str(), listed[0].tool.as_str(), listed[0].cancelled), ("c1", "stuck", false));
        signal.cancel();
        tokio::time::sleep(Duration::from_millis(20)).await;
        let listed = rt.in_flight();
        assert!(listed[0].cancelled, "still running, its signal cancelled: {listed:?}");
        assert!(rt.abandon(listed[0].token));
    });
    assert_eq!(result.error_code(), Some(&ErrorCode::ABORTED));
    assert_eq!(result.text(), "Error: tool \"stuck\" was abandoned by the host while its body was still running");
    assert!(rt.in_flight().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ceiling_reaps_a_body_whose_execute_future_was_dropped() {
    let (rt, _tools) = runtime();
    let results = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&results);
    let _log = rt.on_result(result_observer_fn(move |exec, result| {
        seen.lock().unwrap().push((exec.call_id.clone(), result.error_code().cloned(), result.text()));
    }));
    rt.set_body_ceiling(Some(Duration::from_millis(200)));
    let dropped = tokio::time::timeout(Duration::from_millis(20), rt.execute(ToolExecutionInput::new("c1", "stuck", json!({})))).await;
    assert!(dropped.is_err(), "the caller gave up and dropped the future");
    assert_eq!(rt.in_flight().len(), 1, "the body runs on in the background, listed");
    let listed = until_listed(&rt, 0).await;
    assert!(listed.is_empty(), "reaped at the ceiling: {listed:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while results.lock().unwrap().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let results = results.lock().unwrap();
    assert_eq!(results.len(), 1, "one published result");
    assert_eq!(results[0].1, Some(ErrorCode::TOOL_TIMEOUT));
    assert_eq!(
        results[0].2,
        "Error: tool \"stuck\" ran past the body ceiling of 200ms and was abandoned (it did not stop when cancelled)"
    );
}

#[tokio::test]
async fn without_a_ceiling_a_body_runs_on_and_a_quick_body_is_never_listed() {
    let (rt, _tools) = runtime();
    rt.set_body_ceiling(None);
    assert_eq!(rt.body_ceiling(), None);
    assert_eq!(rt.execute(ToolExecutionInput::new("q", "quick", json!({}))).await.text(), "done");
    assert!(rt.in_flight().is_empty());
    let outcome = tokio::time::timeout(Duration::from_millis(100), rt.execute(ToolExecutionInput::new("c1", "stuck", json!({})))).await;
    assert!(outcome.is_err(), "nothing bounded it");
}
