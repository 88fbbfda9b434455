//! The `run_code` body: the dispatch bridge between a program and the registry (upstream
//! `createRunCodeTool`'s `execute`), reading only its [`TransportHost`]. In order: the `description`
//! check (`invalid description: expected a non-empty string`), the runtime check (upstream
//! `requireCodeRuntime(defaultMode)`, with its two messages), one binding per tool the agent sees (presentation order,
//! `run_code` excluded) in the `tools` namespace with the `ToolCallError` class — the names cached per agent
//! scope for the registry's generation, every binding one dispatcher handed the name —, then the run under a
//! fresh run signal that the transport call's own cancellation aborts. A binding snapshots its argument
//! (`tool arguments must be lossless JSON (...)`), numbers the sub-call `<callId>:code:<n>` and submits it
//! to the run's [`Pool`]; the sub-call goes through the complete pipeline with the transport call as
//! parent (exempt from the `code` collapse), the same agent and the run signal; the program receives the
//! value or, for a failure, only its message. When the run resolves the run signal aborts with
//! `run_code settled` and the pool drains: every started sub-call commits, queued ones are abandoned
//! (`run_code run is over (<reason>); <name> tool call abandoned`); a binding called once the run is over
//! fails with `... <name> not dispatched`, a result arriving then with `... <name> result discarded`.
//! A failed run is `CodeRunFailedError` (`CODE_RUN_FAILED`): `code run failed (<kind>): <message>`, plus
//! `\nCaptured output:\n<logs>` when there are logs, the whole text under the runtime's model-text cap
//! (`CodeRuntimeLimits::max_model_text_bytes`, `render.rs`); a successful one is `{ logs, result? }`.
//!
//! The reference's cancellation tokens carry no reason: the transport call's abort reaches the run with
//! the reason its caller attached ([`crate::ToolRuntime::set_abort_reason`]), else
//! [`DEFAULT_ABORT_REASON`] (an `AbortController.abort()` without a reason). A sub-call's signal is
//! the run signal, so its abort reason is the run signal's: the transport call's reason, or
//! `run_code settled` (the pool registers it for each sub-call it enters, RUN-057).
//!
//! Spec: RUN-001, RUN-004..RUN-010, RUN-017..RUN-021, RUN-024, RUN-032, RUN-057, CODE-008.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};

use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tokio_util::sync::WaitForCancellationFutureOwned;

use super::dispatch_log::DispatchLogHooks;
use super::flavor::json_string;
use super::pool::{Outer, Pool, Queue, Reply, Submission};
use super::render::CappedText;
use super::{
    BindingNames, CodeBindingErrorClass, CodeBindingNamespace, CodeBindings, DispatchFn, CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeMisuse,
    DEFAULT_ABORT_REASON, RunSignal,
};
use crate::callback::Contained;
use crate::error::{ErrorCode, ToolFailure};
use crate::execution::{ToolExecutionInput, ToolRunContext};
use crate::hooks::Slot;
use crate::pipeline::Pipeline;
use crate::presentation::{RUN_CODE_NAME, ToolMode};
use crate::registry::Registry;
use crate::scope::ScopeKey;
use crate::sdk::{SDK_LANGUAGES, renderer};

/// The reason the run signal aborts with once the run resolved.
pub const SETTLED_REASON: &str = "run_code settled";

/// The name of a failed run's error (`error.info.name`).
pub const CODE_RUN_FAILED_NAME: &str = "CodeRunFailedError";

/// What the transport's body reads from the runtime that owns it: the pipeline its sub-calls go through
/// (weak: the registry holding the transport belongs to that pipeline), the code runtime mount point, the
/// overlap cap and the dispatch log's observers and waterfall.
pub(crate) struct TransportHost {
    pub(crate) pipeline: Weak<Pipeline>,
    pub(crate) runtime: Arc<Slot<Arc<dyn CodeRuntime>>>,
    pub(crate) max_parallel_sub_calls: u64,
    pub(crate) dispatch_log: DispatchLogHooks,
    /// The binding names per agent scope, for the registry's current generation.
    pub(crate) names: NamesCache,
}

/// The `tools` namespace's names (every tool the agent sees but `run_code`, presentation order) per agent
/// scope, valid for one registry generation: a run reads them instead of walking the registry, so its
/// setup costs the same with 10 tools or 10,000 (issue 39).
#[derive(Default)]
pub(crate) struct NamesCache(Mutex<(u64, ScopedNames)>);

/// The names kept for one generation, per agent scope.
type ScopedNames = Vec<(Option<ScopeKey>, Arc<BindingNames>)>;

/// Most agent scopes whose names are kept for one generation.
const NAMES_CACHE_ENTRIES: usize = 64;

impl NamesCache {
    /// The names `agent` sees in `registry` now.
    fn get(&self, registry: &Registry, agent: Option<&ScopeKey>) -> Arc<BindingNames> {
        // Read before the registry: a write meanwhile leaves the names under a generation no later run asks for.
        let generation = registry.generation();
        {
            let cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
            if cache.0 == generation
                && let Some((_, names)) = cache.1.iter().find(|(scope, _)| scope.as_ref() == agent)
            {
                return Arc::clone(names);
            }
        }
        let names: Vec<String> = registry
            .visible(agent)
            .into_iter()
            .filter(|tool| tool.schema.name != RUN_CODE_NAME)
            .map(|tool| tool.schema.name.clone())
            .collect();
        let names = Arc::new(BindingNames::new(names));
        let mut cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if cache.0 != generation {
            *cache = (generation, Vec::new());
        }
        if cache.1.len() >= NAMES_CACHE_ENTRIES {
            cache.1.remove(0);
        }
        cache.1.push((agent.cloned(), Arc::clone(&names)));
        names
    }
}

/// Upstream `requireCodeRuntime(mode)`: the mounted runtime, provided its language has an SDK renderer;
/// otherwise the actionable misconfiguration message (`mode` is the presentation that needed it). The
/// `run_code` body and the prompt contribution both check this, each throwing its own error type.
pub(crate) fn require_code_runtime(runtime: Option<Arc<dyn CodeRuntime>>, mode: ToolMode) -> Result<Arc<dyn CodeRuntime>, String> {
    let Some(runtime) = runtime else {
        return Err(format!(
            "dsh-tools: mode \"{mode}\" requires a code runtime — load a ctx.codeRuntime implementation (e.g. @deepseek-ai/dsh-code-runtime-worker-thread) or set tools mode to \"native\""
        ));
    };
    if renderer(runtime.language()).is_none() {
        let known: Vec<String> = SDK_LANGUAGES.iter().map(|l| json_string(l)).collect();
        return Err(format!(
            "dsh-tools: no SDK renderer registered for runtime language {} (known: {})",
            json_string(runtime.language()),
            known.join(", ")
        ));
    }
    Ok(runtime)
}

/// Whether JavaScript's `String.prototype.trim` leaves nothing (ECMAScript WhiteSpace and
/// LineTerminator code points; Rust's `char::is_whitespace` differs on U+0085 and U+FEFF).
pub(crate) fn js_trim_is_empty(s: &str) -> bool {
    s.chars().all(|c| match c {
        '\u{0085}' => false,
        '\u{FEFF}' => true,
        c => c.is_whitespace(),
    })
}

/// The transport's body.
pub(crate) async fn execute(
    host: Arc<TransportHost>,
    default_mode: ToolMode,
    args: Arc<Value>,
    ctx: ToolRunContext,
) -> Result<Value, ToolFailure> {
    let description = args.get("description").and_then(Value::as_str).unwrap_or_default();
    if js_trim_is_empty(description) {
        return Err(ToolFailure::message("invalid description: expected a non-empty string"));
    }
    let Some(pipeline) = host.pipeline.upgrade() else {
        return Err(ToolFailure::message("dsh-tools: the tool runtime was dropped"));
    };
    let runtime = require_code_runtime(host.runtime.get(), default_mode).map_err(ToolFailure::message)?;
    let program = args.get("code").and_then(Value::as_str).unwrap_or_default().to_owned();
    let run_signal = RunSignal::new();
    let queue = Arc::new(Queue::default());
    let outer = Arc::new(Outer { ctx: ctx.clone(), run_signal: run_signal.clone(), max_parallel: host.max_parallel_sub_calls });
    let functions = CodeBindings::dispatch(host.names.get(&pipeline.registry, ctx.agent()), dispatcher(Arc::clone(&outer), Arc::clone(&queue)));
    let request = CodeRunRequest {
        program,
        bindings: vec![CodeBindingNamespace {
            global: "tools".to_owned(),
            functions,
            error_class: Some(CodeBindingErrorClass {
                name: "ToolCallError".to_owned(),
                member_name_property: "toolName".to_owned(),
            }),
        }],
        signal: run_signal.clone(),
        state_owner: None,
    };
    let run = match crate::callback::contain(|| runtime.run(request)) {
        Ok(run) => run,
        Err(panic) => return Err(ToolFailure::message(panic)),
    };
    let mut pool = Pool::new(Arc::clone(&pipeline), host.dispatch_log.clone(), outer, queue);
    let outcome = RunAndDrain {
        run: Some(Contained(run)),
        outcome: None,
        pool: &mut pool,
        outer: Some(Box::pin(ctx.signal().clone().cancelled_owned())),
        run_signal,
        reason: {
            let (pipeline, token) = (Arc::clone(&pipeline), ctx.token());
            Box::new(move || pipeline.abort_reasons.get(token).unwrap_or_else(|| DEFAULT_ABORT_REASON.to_owned()))
        },
    }
    .await;
    drop(pool);
    match outcome {
        Err(panic) => Err(ToolFailure::message(panic)),
        Ok(Err(CodeRuntimeMisuse { message })) => Err(ToolFailure::message(message)),
        Ok(Ok(result)) => completion(result, super::model_text_cap(runtime.as_ref())),
    }
}

impl CodeRunResult {
    /// The value a code-running tool returns for this run: `{ logs, result? }`, or the run's failure as a
    /// `CodeRunFailedError` (`code run failed (<kind>): <message>`, with the captured output after it).
    /// `run_code` uses it; so can another transport built on a [`CodeRuntime`] (the dsh-codemode preset's
    /// `code_run` does).
    pub fn into_transport_value(self) -> Result<Value, ToolFailure> {
        completion(self, None)
    }

    /// [`into_transport_value`](Self::into_transport_value) with a failure's text under the model's text
    /// cap (`CodeRuntimeLimits::max_model_text_bytes`; `None`: no cap).
    pub fn into_transport_value_capped(self, max_model_text_bytes: Option<u64>) -> Result<Value, ToolFailure> {
        completion(self, max_model_text_bytes)
    }
}

/// Map a resolved run to the transport's value or its `CodeRunFailedError`, whose text is built under
/// the model's text cap (`render.rs`): a 64 MiB captured output is never joined whole.
fn completion(result: CodeRunResult, cap: Option<u64>) -> Result<Value, ToolFailure> {
    let CodeRunResult { logs, value, error } = result;
    if let Some(error) = error {
        let mut text = CappedText::new(cap);
        text.push(&format!("code run failed ({}): ", error.kind));
        text.push(&error.message);
        if !logs.is_empty() {
            text.push("\nCaptured output:\n");
            for (i, log) in logs.iter().enumerate() {
                if i > 0 {
                    text.push("\n");
                }
                text.push(log);
            }
        }
        if let Some(value) = value {
            crate::value::dismantle(value);
        }
        return Err(ToolFailure::harness(text.finish(), CODE_RUN_FAILED_NAME, ErrorCode::CODE_RUN_FAILED));
    }
    let mut out = Map::new();
    out.insert("logs".into(), Value::Array(logs.into_iter().map(Value::String).collect()));
    if let Some(value) = value {
        out.insert("result".into(), value);
    }
    Ok(Value::Object(out))
}

/// Every binding of a run: submit the call at once (upstream's binding is an async function whose
/// synchronous part queues the call and kicks the lane before the program's next step), then wait for its
/// committed result.
fn dispatcher(outer: Arc<Outer>, queue: Arc<Queue>) -> DispatchFn {
    Arc::new(move |name: &str, argument: Option<Value>| {
        let over = |name: &str, what: &str| format!("run_code run is over ({}); {name} {what}", outer.run_signal.reason());
        if outer.run_signal.aborted() {
            if let Some(argument) = argument {
                crate::value::dismantle(argument);
            }
            let message = over(name, "not dispatched");
            return Box::pin(async move { Err(message) });
        }
        let argument = match argument {
            Some(argument) if crate::value::is_lossless(&argument) => argument,
            other => {
                if let Some(other) = other {
                    crate::value::dismantle(other);
                }
                return Box::pin(async {
                    Err("tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)".to_owned())
                });
            }
        };
        let n = queue.next_number();
        let ctx = &outer.ctx;
        let sub_call_id = format!("{}:code:{n}", ctx.call_id());
        let logged = crate::value::deep_clone(&argument);
        let input = ToolExecutionInput {
            call_id: sub_call_id.clone(),
            name: name.to_owned(),
            arguments: argument,
            signal: outer.run_signal.token().clone(),
            agent: ctx.agent().cloned(),
            parent: Some(ctx.token()),
            root_call_id: Some(ctx.root_call_id().to_owned()),
        };
        let (reply, answer) = oneshot::channel();
        queue.submit(Submission { name: name.to_owned(), sub_call_id, input, logged, reply });
        let (name, outer) = (name.to_owned(), Arc::clone(&outer));
        Box::pin(async move {
            let over = |what: &str| format!("run_code run is over ({}); {name} {what}", outer.run_signal.reason());
            let outcome = match answer.await {
                Ok(Reply::Settled(outcome)) => outcome,
                Ok(Reply::Abandoned(reason)) => {
                    return Err(format!("run_code run is over ({reason}); {name} tool call abandoned"));
                }
                Err(_) => return Err(over("tool call abandoned")),
            };
            if outer.run_signal.aborted() {
                if let Ok(value) = outcome {
                    crate::value::dismantle(value);
                }
                return Err(over("result discarded"));
            }
            outcome
        })
    })
}

type RunFuture = Contained<'static, Result<CodeRunResult, CodeRuntimeMisuse>>;

/// The run and the pool in one future: relays the transport call's abort into the run signal, aborts it
/// with [`SETTLED_REASON`] once the run resolved, then drains the pool.
struct RunAndDrain<'a> {
    run: Option<RunFuture>,
    outcome: Option<Result<Result<CodeRunResult, CodeRuntimeMisuse>, String>>,
    pool: &'a mut Pool,
    outer: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    run_signal: RunSignal,
    /// The transport call's abort reason when its signal fires.
    reason: Box<dyn Fn() -> String + Send>,
}

impl Future for RunAndDrain<'_> {
    type Output = Result<Result<CodeRunResult, CodeRuntimeMisuse>, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(outer) = this.outer.as_mut() {
            if outer.as_mut().poll(cx).is_ready() {
                this.outer = None;
                this.run_signal.abort((this.reason)());
            }
        }
        if this.run.is_some() {
            // Submissions made before the run resolved start first, as upstream's do synchronously when
            // the program calls a binding (an abandoned call is one the lane could not start yet).
            let _ = this.pool.poll_lane(cx);
        }
        if let Some(run) = this.run.as_mut() {
            if let Poll::Ready(outcome) = Pin::new(run).poll(cx) {
                // Every binding call the program made happened before the run resolved: start what the
                // lane can start before the run is over (the program may have called and returned
                // between the poll above and this one).
                let _ = this.pool.poll_lane(cx);
                this.run = None;
                this.outcome = Some(outcome);
                this.run_signal.abort(SETTLED_REASON);
                this.pool.finishing = true;
                // The transport call's abort no longer matters.
                this.outer = None;
            }
        }
        // The pool is polled after the run so that a settlement is seen in the same pass.
        let drained = this.pool.poll_lane(cx).is_ready();
        if drained {
            if let Some(outcome) = this.outcome.take() {
                return Poll::Ready(outcome);
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::js_trim_is_empty;
    use crate::code::render::cut_marker;
    use crate::code::{CodeRunError, CodeRunErrorKind, CodeRunResult};

    fn failed(logs: Vec<String>) -> CodeRunResult {
        CodeRunResult {
            logs,
            value: None,
            error: Some(CodeRunError { kind: CodeRunErrorKind::OutputLimit, message: "outer output exceeded 64 bytes".into() }),
        }
    }

    #[test]
    fn a_failure_text_stays_within_the_model_text_cap() {
        let logs = vec!["x".repeat(1000), "y".repeat(1000)];
        let full = "code run failed (output-limit): outer output exceeded 64 bytes\nCaptured output:\n".to_owned()
            + &"x".repeat(1000)
            + "\n"
            + &"y".repeat(1000);
        // No cap: upstream's text, whole.
        let uncapped = failed(logs.clone()).into_transport_value().unwrap_err();
        assert_eq!(uncapped.message, full);
        assert_eq!(failed(logs.clone()).into_transport_value_capped(Some(1 << 20)).unwrap_err().message, full);
        // Capped: the first 100 bytes, then how much there was and how much was cut.
        let capped = failed(logs).into_transport_value_capped(Some(100)).unwrap_err();
        assert_eq!(capped.message, format!("{}{}", &full[..100], cut_marker(full.len(), full.len() - 100)));
    }

    #[test]
    fn trim_follows_javascript() {
        assert!(js_trim_is_empty(" \t\n\u{FEFF}\u{3000}"));
        assert!(!js_trim_is_empty("\u{0085}"));
        assert!(!js_trim_is_empty(" x "));
    }
}
