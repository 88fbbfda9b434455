//! The native execution pipeline, one module per stage.
//!
//! # Order
//! 1. [`entry`]: snapshot arguments, mint the token, capture the visible definition's content finalizer.
//!    A call the `code` collapse rejects is final here: `UNKNOWN_TOOL` (code-only message, no finalizer),
//!    or `ABORTED_BEFORE_DISPATCH` when the caller had already cancelled (finalizer applied).
//!    A caller signal already cancelled here yields `ABORTED_BEFORE_DISPATCH` and skips every phase.
//! 2. [`pre_execute`]: the `tools/pre-execute` waterfall (default allow; `ask` goes to the approval seam,
//!    or degrades to deny without one; a cancelled approval with a cancelled caller is
//!    `ABORTED_BEFORE_DISPATCH`). A listener or approver failure becomes the final result (post-execute
//!    skipped).
//! 3. [`guards`]: after an allow, global guards then the agent chain's, first denial wins.
//!    A denial becomes a post-stage result `Error: <reason>`; cancellation observed here is
//!    `ABORTED_BEFORE_DISPATCH`.
//! 4. [`dispatch`]: the `tools/execute` wrappers around the body stage, which resolves the visible tool
//!    *now* (absent: `UNKNOWN_TOOL`, after policy, as upstream), marks the body invoked, validates DSL
//!    arguments (`INVALID_ARGS`, still before the body — upstream validates inside `defineTool`'s execute
//!    wrapper, so policy has already run), runs the body to completion, then [`output`]: snapshot,
//!    validate, render, project metadata. Deferred contexts are prepended; a caller cancellation replaces
//!    only a success (`ABORTED` once the body started). A wrapper failure is final.
//! 5. [`post_execute`]: the `tools/post-execute` waterfall over every result of steps 3-4; then the same
//!    cancellation replacement rule. A listener failure, or an invalid decision, becomes the final result.
//! 6. [`result`]: apply the captured `finalizeContent`, notify `tools/result` observers exactly once, return.
//!
//! Spec: PIPE-001, PIPE-010, PIPE-013..PIPE-016, ARG-003, ARG-007, ARG-008, UNK-007, UNK-010, CODE-006,
//! CODE-007.

pub(crate) mod dispatch;
pub(crate) mod entry;
pub(crate) mod guards;
pub(crate) mod output;
pub(crate) mod post_execute;
pub(crate) mod pre_execute;
pub(crate) mod prepare;
pub(crate) mod result;

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::definition::BoxFuture;
use crate::execution::ToolExecutionInput;
use crate::result::ToolExecutionResult;
use crate::runtime::Inner;

/// Where a pre-dispatch stage left the call.
pub(crate) enum Stage {
    /// Still goes through post-execute and the cancellation check.
    Post(ToolExecutionResult),
    /// Skips post-execute.
    Final(ToolExecutionResult),
}

/// What the prepare stage decided (upstream's scheduler `prepare` kinds).
// Moved once per call; boxing the result would allocate on every execution.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Prepared {
    /// Policy allowed the call: dispatch it next.
    Dispatch,
    /// A result already exists: `Post` still goes through post-execute, `Final` skips it.
    Done(Stage),
}

/// Run one call through every stage.
pub(crate) async fn execute(inner: &Inner, input: ToolExecutionInput) -> ToolExecutionResult {
    let call = entry::create(inner, input, None);
    let stage = match prepare::run(inner, &call).await {
        Prepared::Dispatch => dispatch::run(inner, &call).await,
        Prepared::Done(stage) => stage,
    };
    complete(inner, &call, stage).await
}

/// The commit of a dispatched or prepared result: post-execute for a `Post` result (upstream's scheduler
/// `finalize`), then finish (`finish`: the finalizer and `tools/result`).
pub(crate) async fn complete(inner: &Inner, call: &entry::Call, stage: Stage) -> ToolExecutionResult {
    let result = match stage {
        Stage::Final(result) => result,
        Stage::Post(result) => match post_execute::run(inner, call, result).await {
            Ok(result) => replace_if_cancelled(call, result),
            Err(failure) => ToolExecutionResult::from_failure(failure),
        },
    };
    result::finish(inner, call, result)
}

/// A caller cancellation replaces only a success: `ABORTED` once the body was invoked, else
/// `ABORTED_BEFORE_DISPATCH`; the prior result's contexts are kept.
pub(crate) fn replace_if_cancelled(call: &entry::Call, result: ToolExecutionResult) -> ToolExecutionResult {
    if !call.exec.signal.is_cancelled() || result.is_error() {
        return result;
    }
    let contexts = match result {
        ToolExecutionResult::Success { additional_contexts, value, .. } => {
            crate::value::dismantle(value);
            additional_contexts
        }
        ToolExecutionResult::Failure { additional_contexts, .. } => additional_contexts,
    };
    if call.body_invoked.load(std::sync::atomic::Ordering::SeqCst) {
        ToolExecutionResult::aborted(contexts)
    } else {
        ToolExecutionResult::aborted_before_dispatch(contexts)
    }
}

/// The message of a caught panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<unprintable thrown value>".to_owned()
    }
}

/// Run a user callback, turning a panic into its message (a thrown error, in upstream's terms).
pub(crate) fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(p.as_ref()))
}

/// Polls a user future, turning a panic into its message. The future is polled to completion, never
/// dropped early.
pub(crate) struct Contained<'a, T>(pub(crate) BoxFuture<'a, T>);

impl<T> Future for Contained<'_, T> {
    type Output = Result<T, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(move || fut.poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use serde_json::{Value, json};

    use crate::definition::{OutputDeclaration, Parameters, ToolDefinition};
    use crate::error::{ErrorCode, ToolFailure};
    use crate::execution::ToolExecutionInput;
    use crate::hooks::pre_execute_fn;
    use crate::runtime::{ToolRuntime, ToolsConfig};

    fn def(name: &str, body_calls: Arc<AtomicUsize>) -> ToolDefinition {
        ToolDefinition::new(
            name,
            "d",
            Parameters::Dsl(json!({"a": {"type": "string", "required": true}})),
            OutputDeclaration {
                schema: json!({"type":"string"}),
                render: Arc::new(|_, v| Ok(vec![json!({"type":"text","text": v})])),
                presentation_meta: None,
            },
            Arc::new(move |args, ctx| {
                body_calls.fetch_add(1, Ordering::SeqCst);
                Box::pin(async move {
                    if args.get("a") == Some(&json!("panic")) {
                        panic!("body panicked");
                    }
                    if args.get("a") == Some(&json!("cancel")) {
                        ctx.signal.cancel();
                    }
                    Ok(json!("ok"))
                })
            }),
        )
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        match tokio::runtime::Builder::new_current_thread().build() {
            Ok(rt) => rt.block_on(f),
            Err(e) => panic!("runtime: {e}"),
        }
    }

    #[test]
    fn every_outcome_is_observed_exactly_once() {
        let rt = ToolRuntime::new(ToolsConfig::default());
        let body_calls = Arc::new(AtomicUsize::new(0));
        let _t = rt.register(def("t", Arc::clone(&body_calls)), None);
        let seen = Arc::new(Mutex::new(Vec::<(String, bool)>::new()));
        let sink = Arc::clone(&seen);
        let _o = rt.on_result(Arc::new(move |exec, result| {
            if let Ok(mut s) = sink.lock() {
                s.push((exec.call_id.clone(), result.is_error()));
            }
        }));
        let _deny = rt.on_pre_execute(
            None,
            pre_execute_fn(|exec, next| {
                Box::pin(async move {
                    match exec.arguments.get("a").and_then(Value::as_str) {
                        Some("deny") => Ok(crate::hooks::PreToolDecision::Deny { reason: "no".into() }),
                        Some("throw") => Err(ToolFailure::message("listener failed")),
                        _ => next.run().await,
                    }
                })
            }),
        );
        let cases = ["ok", "deny", "throw", "panic", "cancel", "pre-cancel", "invalid", "unknown"];
        block_on(async {
            for case in cases {
                let name = if case == "unknown" { "missing" } else { "t" };
                let args = if case == "invalid" { json!({}) } else { json!({"a": case}) };
                let input = ToolExecutionInput::new(case, name, args);
                if case == "pre-cancel" {
                    input.signal.cancel();
                }
                let result = rt.execute(input).await;
                match case {
                    "ok" => assert!(!result.is_error()),
                    "cancel" => assert_eq!(result.error_code(), Some(&ErrorCode::ABORTED)),
                    "pre-cancel" => assert_eq!(result.error_code(), Some(&ErrorCode::ABORTED_BEFORE_DISPATCH)),
                    "invalid" => assert_eq!(result.error_code(), Some(&ErrorCode::INVALID_ARGS)),
                    "unknown" => assert_eq!(result.error_code(), Some(&ErrorCode::UNKNOWN_TOOL)),
                    _ => assert!(result.is_error()),
                }
            }
        });
        let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
        let ids: Vec<&str> = seen.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, cases);
        // Bodies ran for ok, panic, cancel and invalid (the DSL check sits inside the body position).
        assert_eq!(body_calls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn deep_arguments_are_validated_and_dropped_without_overflow() {
        let rt = ToolRuntime::new(ToolsConfig::default());
        let _t = rt.register(def("t", Arc::new(AtomicUsize::new(0))), None);
        let mut deep = json!(1);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        let mut args = serde_json::Map::new();
        args.insert("a".into(), deep);
        let result = block_on(rt.execute(ToolExecutionInput::new("c", "t", Value::Object(args))));
        assert_eq!(result.error_code(), Some(&ErrorCode::INVALID_ARGS));
    }

    #[test]
    fn caller_cancellation_reaches_a_body_under_a_replaced_signal() {
        use crate::pipeline::dispatch::{DispatchExecution, ExecuteNext, execute_wrapper_fn};
        use tokio_util::sync::CancellationToken;
        let rt = ToolRuntime::new(ToolsConfig::default());
        let finished = Arc::new(AtomicUsize::new(0));
        let done = Arc::clone(&finished);
        let waiting = ToolDefinition::new(
            "wait",
            "d",
            Parameters::Raw(json!({"type":"object"})),
            OutputDeclaration { schema: json!({"type":"string"}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
            Arc::new(move |_, ctx| {
                let done = Arc::clone(&done);
                Box::pin(async move {
                    ctx.signal.cancelled().await;
                    done.fetch_add(1, Ordering::SeqCst);
                    Ok(json!("settled"))
                })
            }),
        );
        let _t = rt.register(waiting, None);
        let _w = rt.on_execute(
            None,
            execute_wrapper_fn(|exec: &DispatchExecution, next: ExecuteNext<'_>| {
                Box::pin(async move {
                    exec.set_signal(Some(CancellationToken::new()));
                    next.run().await
                })
            }),
        );
        let input = ToolExecutionInput::new("c", "wait", json!({}));
        let caller = input.signal.clone();
        let result = block_on(async {
            let canceller = tokio::spawn(async move {
                tokio::task::yield_now().await;
                caller.cancel();
            });
            let result = rt.execute(input).await;
            let _ = canceller.await;
            result
        });
        assert_eq!(finished.load(Ordering::SeqCst), 1);
        assert_eq!(result.error_code(), Some(&ErrorCode::ABORTED));
    }

    #[test]
    fn deep_schemas_register_execute_and_unregister_without_overflow() {
        const DEPTH: usize = 100_000;
        let mut spec = json!({"type": "string"});
        let mut raw = json!({"type": "string"});
        let mut args_a = json!("leaf");
        for _ in 0..DEPTH {
            let mut node = serde_json::Map::new();
            node.insert("type".into(), json!("array"));
            node.insert("items".into(), spec);
            spec = Value::Object(node);
            let mut node = serde_json::Map::new();
            node.insert("type".into(), json!("array"));
            node.insert("items".into(), raw);
            raw = Value::Object(node);
            args_a = Value::Array(vec![args_a]);
        }
        let mut params = serde_json::Map::new();
        params.insert("a".into(), spec);
        let rt = ToolRuntime::new(ToolsConfig::default());
        let dsl = ToolDefinition::new(
            "deep",
            "d",
            Parameters::Dsl(Value::Object(params)),
            OutputDeclaration { schema: json!({"type":"string"}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
            Arc::new(|_, _| Box::pin(async { Ok(json!("ok")) })),
        );
        let registration = rt.register(dsl, None);
        assert!(registration.is_ok());
        let mut raw_def = ToolDefinition::new(
            "raw",
            "d",
            Parameters::Raw(json!({"type":"object"})),
            OutputDeclaration { schema: raw, render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
            Arc::new(|_, _| Box::pin(async { Ok(json!("not an array")) })),
        );
        raw_def.timeout_ms = Some(0.0);
        // Rejected after compiling the deep output schema: the definition is dropped without recursion.
        assert!(rt.register(raw_def, None).is_err());
        let mut args = serde_json::Map::new();
        args.insert("a".into(), args_a);
        let result = block_on(rt.execute(ToolExecutionInput::new("c", "deep", Value::Object(args))));
        assert!(!result.is_error());
        drop(registration);
        assert!(rt.schemas(None).is_empty());
    }
}
