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

pub(crate) mod answer;
pub(crate) mod dispatch;
pub(crate) mod entry;
pub(crate) mod guards;
pub(crate) mod inflight;
pub(crate) mod output;
pub(crate) mod post_execute;
pub(crate) mod pre_execute;
pub(crate) mod prepare;
pub(crate) mod result;

use std::future::Future;
use std::sync::Arc;

use crate::approval::ApprovalSeam;
use crate::execution::{AbortReasons, ExecutionMode, ToolExecutionInput};
use crate::hooks::{self, HookList, LogSink, PostExecuteListener, PreExecuteListener, ResultObserver, Slot};
use crate::registry::Registry;
use crate::result::ToolExecutionResult;

use self::dispatch::ExecuteWrapper;

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

/// Everything an execution reads: the registry and the hook tables, the approval mount point, and the
/// abort reasons callers attached. Owned by the `ToolRuntime` facade (which registers into it) and, weakly,
/// by the `run_code` transport (which drives its sub-calls through it). Each stage receives only the
/// fields it reads.
pub(crate) struct Pipeline {
    pub(crate) registry: Arc<Registry>,
    pub(crate) pre_execute: Arc<HookList<Arc<dyn PreExecuteListener>>>,
    pub(crate) execute_wrappers: Arc<HookList<Arc<dyn ExecuteWrapper>>>,
    pub(crate) post_execute: Arc<HookList<Arc<dyn PostExecuteListener>>>,
    pub(crate) observers: Arc<HookList<ResultObserver>>,
    pub(crate) logs: Arc<HookList<LogSink>>,
    pub(crate) approval: Arc<Slot<Arc<dyn ApprovalSeam>>>,
    pub(crate) abort_reasons: AbortReasons,
    /// The bodies pending now, and the ceiling on each.
    pub(crate) in_flight: inflight::InFlight,
}

impl Pipeline {
    /// A pipeline over `registry` with no hooks, no approval seam and no attached reasons.
    pub(crate) fn new(registry: Arc<Registry>) -> Self {
        Self {
            registry,
            pre_execute: HookList::new(),
            execute_wrappers: HookList::new(),
            post_execute: HookList::new(),
            observers: HookList::new(),
            logs: HookList::new(),
            approval: Slot::new(),
            abort_reasons: AbortReasons::default(),
            in_flight: inflight::InFlight::new(),
        }
    }

    /// Run one call through every stage. The entry stage runs now, as upstream's `execute` creates the
    /// execution before its first await; the rest runs when the returned future is polled. The future
    /// owns the pipeline (an `Arc`) and the call, not the input: the caller boxes it once per call, and
    /// a box under 1 KiB stays on the allocator's fast path, so the stages awaited here keep only what
    /// crosses their awaits. They follow each other at once, so each may rely on the signal read its
    /// predecessor made last ([`Read::Fresh`]).
    pub(crate) fn execute(self: Arc<Self>, input: ToolExecutionInput) -> impl Future<Output = ToolExecutionResult> + Send + 'static {
        let call = self.enter(input);
        async move {
            // `if let` (edition 2024): the prepared value is gone before the dispatch await, so the future
            // does not keep a `Prepared` beside the dispatch stage.
            let stage = if let Prepared::Done(stage) = self.prepare(&call).await {
                stage
            } else {
                dispatch::run(&self.execute_wrappers, &self.registry, &self.in_flight, &call, Read::Fresh).await
            };
            self.commit(&call, stage, Read::Fresh).await
        }
    }

    /// Stage 1: materialize the execution.
    pub(crate) fn enter(&self, input: ToolExecutionInput) -> entry::Call {
        entry::create(&self.registry, self.abort_reasons, input)
    }

    /// Stages 2-3: pre-execute (with approval) and guards.
    pub(crate) async fn prepare(&self, call: &entry::Call) -> Prepared {
        let policy = prepare::PolicyTables { pre_execute: &self.pre_execute, approval: &self.approval, registry: &self.registry };
        prepare::run(policy, call).await
    }

    /// Stage 4: the wrappers around the body, started on its own (the caller's signal is read again).
    pub(crate) async fn dispatch(&self, call: &entry::Call) -> Stage {
        dispatch::run(&self.execute_wrappers, &self.registry, &self.in_flight, call, Read::Stale).await
    }

    /// The commit of a dispatched or prepared result, started on its own (the caller's signal is read
    /// again): post-execute for a `Post` result (upstream's scheduler `finalize`), then finish (`finish`:
    /// the finalizer and `tools/result`).
    pub(crate) async fn complete(&self, call: &entry::Call, stage: Stage) -> ToolExecutionResult {
        self.commit(call, stage, Read::Stale).await
    }

    /// Stages 5-6 after a stage that read the signal as `read` says. The result is worked on where the
    /// stage holds it, and moved out once, when it is returned: each move of a result (200 bytes) is a
    /// `memcpy` call.
    async fn commit(&self, call: &entry::Call, mut stage: Stage, read: Read) -> ToolExecutionResult {
        let listeners = self.post_chain(call, &mut stage, read);
        let (Stage::Post(result) | Stage::Final(result)) = &mut stage;
        if let Some(chain) = listeners {
            // Awaited where it stands: across this await the future keeps only the snapshot and the first
            // listener's boxed future, so it grows by a few words and needs no box of its own.
            let outcome = post_execute::start(&chain, call, result).await;
            self.post(call, result, outcome);
        }
        result::finish(&self.observers, &self.logs, &self.abort_reasons, call, result);
        let (Stage::Post(result) | Stage::Final(result)) = stage;
        result
    }

    /// Stage 5's start: the post-execute listeners a `Post` result goes through, when some apply to the
    /// call. With none, the cancellation rule applies now, unless the previous stage applied it with
    /// nothing run since ([`Read::Fresh`]).
    fn post_chain(&self, call: &entry::Call, stage: &mut Stage, read: Read) -> Option<post_execute::Chain> {
        let Stage::Post(result) = stage else { return None };
        let chain = self.post_execute.snapshot_for(call.exec.agent.as_ref());
        if chain.is_none() && read == Read::Stale {
            replace_if_cancelled(call, result);
        }
        chain
    }

    /// Stage 5 with listeners, once their chain resolved to `outcome`: apply it to `result` in place,
    /// then the cancellation rule; a thrown failure (or a panic) becomes the result.
    fn post(&self, call: &entry::Call, result: &mut ToolExecutionResult, outcome: Result<hooks::PostExecuteOutcome, String>) {
        match post_execute::settle(&self.registry, call, result, outcome) {
            Ok(()) => replace_if_cancelled(call, result),
            Err(failure) => {
                if let ToolExecutionResult::Success { value, .. } = std::mem::replace(result, ToolExecutionResult::from_failure(failure)) {
                    crate::value::dismantle(value);
                }
            }
        }
    }

    /// `Parallel` only when the definition the call would execute has a classifier returning exactly
    /// `Ok(true)` (DSL tools: and the arguments are valid); everything else is `Exclusive`.
    pub(crate) fn execution_mode(&self, input: &ToolExecutionInput) -> ExecutionMode {
        let resolved = self.registry.resolve_execution(&input.name, input.agent.as_ref(), input.parent.is_some());
        let Some(tool) = resolved else {
            return ExecutionMode::Exclusive;
        };
        let Some(classify) = &tool.def.is_concurrency_safe else { return ExecutionMode::Exclusive };
        if !tool.admits_arguments(&input.arguments) {
            return ExecutionMode::Exclusive;
        }
        match crate::callback::contain(|| classify(&input.arguments)) {
            Ok(Ok(true)) => ExecutionMode::Parallel,
            _ => ExecutionMode::Exclusive,
        }
    }
}

impl Drop for Pipeline {
    /// The runtime's attached abort reasons go with it (an execution still running holds the pipeline,
    /// so none can publish after this).
    fn drop(&mut self) {
        self.abort_reasons.purge();
    }
}

/// Whether a stage may rely on the caller's signal as the stage before it last read it.
///
/// Reading a token takes its lock, so a stage that follows another at once — no callback, no await in
/// between — skips the read that would only repeat its predecessor's. A cancellation landing between
/// the two reads is indistinguishable from one landing just after the second, so the outcome is one
/// the pipeline could have produced anyway. The `run_code` pool and the turn executor run the stages
/// apart, with other calls' callbacks in between, and read again ([`Read::Stale`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Read {
    /// The previous stage read the signal last and nothing has run since.
    Fresh,
    /// Other code may have run since the previous stage: read again.
    Stale,
}

/// A caller cancellation replaces only a success (in place): `ABORTED` once the body was invoked, else
/// `ABORTED_BEFORE_DISPATCH`; the prior result's contexts are kept.
pub(crate) fn replace_if_cancelled(call: &entry::Call, result: &mut ToolExecutionResult) {
    if result.is_error() || !call.exec.signal.is_cancelled() {
        return;
    }
    let contexts = std::mem::take(result.additional_contexts_mut());
    let replacement = if call.body_invoked.load(std::sync::atomic::Ordering::Acquire) {
        ToolExecutionResult::aborted(contexts)
    } else {
        ToolExecutionResult::aborted_before_dispatch(contexts)
    };
    if let ToolExecutionResult::Success { value, .. } = std::mem::replace(result, replacement) {
        crate::value::dismantle(value);
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
                        ctx.signal().cancel();
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
                    ctx.signal().cancelled().await;
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
