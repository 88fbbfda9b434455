//! Unit tests of the facade: prepended hooks, abort reasons, Send/Sync of the runtime and its futures.

use std::sync::Arc;

use super::{ToolRuntime, ToolsConfig};
use crate::definition::ToolDefinition;
use crate::execution::ToolExecutionInput;
use crate::hooks::ResultObserver;

fn assert_send<T: Send>(_: &T) {}

#[test]
fn prepended_hooks_run_first_and_a_throwing_guard_is_final() {
    use std::sync::Mutex;
    use crate::definition::{OutputDeclaration, Parameters};
    use crate::error::ToolFailure;
    let rt = ToolRuntime::new(ToolsConfig::default());
    let tool = ToolDefinition::new(
        "t",
        "d",
        Parameters::Raw(serde_json::json!({"type": "object"})),
        OutputDeclaration { schema: serde_json::json!({}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
        Arc::new(|_, _| Box::pin(async { Ok(serde_json::Value::Null) })),
    );
    let _t = rt.register(tool, None);
    let order = Arc::new(Mutex::new(Vec::new()));
    let observer = |label: &'static str| -> ResultObserver {
        let order = Arc::clone(&order);
        Arc::new(move |_, _| order.lock().unwrap_or_else(|p| p.into_inner()).push(label))
    };
    let _a = rt.on_result(observer("appended"));
    let _b = rt.prepend_result(None, observer("prepended"));
    let _g = rt.guard_fallible(None, Arc::new(|_| Err(ToolFailure::message("guard blew"))));
    let input = ToolExecutionInput::new("c", "t", serde_json::json!({}));
    let result = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(runtime) => runtime.block_on(rt.execute(input)),
        Err(e) => panic!("runtime: {e}"),
    };
    assert_eq!(result.to_json()["error"]["message"], "guard blew");
    assert_eq!(*order.lock().unwrap_or_else(|p| p.into_inner()), ["prepended", "appended"]);
}

#[test]
fn a_body_reads_the_reason_its_caller_attached() {
    use std::sync::Mutex;
    use crate::definition::{OutputDeclaration, Parameters};
    use crate::error::ToolFailure;
    use crate::execution::ExecutionToken;
    assert_eq!(crate::execution::DEFAULT_ABORT_REASON, crate::code::DEFAULT_ABORT_REASON);
    let rt = ToolRuntime::new(ToolsConfig::default());
    let seen: Arc<Mutex<Option<ExecutionToken>>> = Arc::default();
    let slot = Arc::clone(&seen);
    let tool = ToolDefinition::new(
        "t",
        "d",
        Parameters::Raw(serde_json::json!({"type": "object"})),
        OutputDeclaration { schema: serde_json::json!({}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
        Arc::new(move |_, run| {
            let slot = Arc::clone(&slot);
            Box::pin(async move {
                let before = run.abort_reason();
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(run.token());
                run.signal().cancelled().await;
                Err(ToolFailure::message(format!("{before:?} then {:?}", run.abort_reason())))
            })
        }),
    );
    let _t = rt.register(tool, None);
    let signal = tokio_util::sync::CancellationToken::new();
    let input = ToolExecutionInput::new("c", "t", serde_json::json!({})).with_signal(signal.clone());
    let abort = async {
        loop {
            let token = *seen.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(token) = token {
                rt.set_abort_reason(token, "why");
                signal.cancel();
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    let result = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(runtime) => runtime.block_on(async { tokio::join!(rt.execute(input), abort).0 }),
        Err(e) => panic!("runtime: {e}"),
    };
    // A failure settling after the abort keeps its own error (PIPE-016).
    assert_eq!(result.to_json()["error"]["message"], "None then Some(\"why\")");
}

#[test]
fn execute_future_is_send_and_runtime_is_shareable() {
    fn assert_sync<T: Send + Sync>() {}
    assert_sync::<ToolRuntime>();
    let rt = ToolRuntime::new(ToolsConfig::default());
    let future = rt.execute(ToolExecutionInput::new("c", "t", serde_json::Value::Null));
    assert_send(&future);
}
