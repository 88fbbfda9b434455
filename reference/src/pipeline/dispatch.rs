//! Dispatch: the `tools/execute` around-wrapper chain (snapshotted when the stage starts, registration
//! order, scoped wrappers only for their agent) ending in the body stage; then normalization of what the
//! chain returned, deferred contexts, and the cancellation rule.
//!
//! # Order
//! The body stage fuses the caller's signal with the wrapper's current one (a wrapper may replace only the
//! signal; the caller's cancellation always reaches the body), returns `ABORTED_BEFORE_DISPATCH` when the
//! fused signal is already cancelled, re-resolves the visible tool (absent: `UNKNOWN_TOOL`), marks the
//! body invoked, validates DSL arguments (`INVALID_ARGS`), runs the body to completion (never dropped
//! early), builds the success through [`output`], and replaces it with `ABORTED` when the fused signal was
//! cancelled meanwhile. Back out of the chain: a success the body stage produced for this execution is
//! kept; any other success (a wrapper-authored or cached one) is revalidated and re-rendered under the
//! active declaration; failures are kept. Then the deferred contexts are prepended, and a caller
//! cancellation replaces a success. A wrapper failure is final (post-execute skipped).
//!
//! Rust futures are lazy: the body starts when the wrapper first polls `next.run()`'s future, not when it
//! calls `run()` (upstream's promise starts eagerly). Each wrapper's `next` runs at most once.
//!
//! The body-stage resolution applies the `code` collapse, as upstream's `resolveExecution` does. The body
//! runs under the pipeline's ceiling ([`inflight`](super::inflight)): listed while pending, dropped when
//! it outlives the ceiling or the embedder abandons it.
//!
//! Spec: PIPE-001, PIPE-014..PIPE-017, UNK-006, ARG-004..ARG-006, ARG-016, CODE-006, CODE-010, WRAP-001..WRAP-008, FIN-006, FIN-007, CANC-001..CANC-008, WRAP-009, WRAP-010, UNK-013, REG-024, CANC-010, CANC-011, PIPE-022.
//!
//! [`output`]: super::output

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::callback::{BoxFuture, Contained, contain};
use crate::error::ToolFailure;
use crate::execution::{ExecutionToken, ToolExecution, ToolRunContext};
use crate::hooks::{HookEntry, HookList, next_applying};
use crate::result::ToolExecutionResult;
use crate::registry::{RUN_CODE_NAME, RegisteredTool, Registry};

use super::entry::Call;
use super::inflight::InFlight;
use super::{Read, Stage, output, replace_if_cancelled};

/// The `tools/execute`-only view of an execution: the same immutable execution plus a replaceable signal.
pub struct DispatchExecution {
    exec: Arc<ToolExecution>,
    replaced: Mutex<Option<CancellationToken>>,
}

impl DispatchExecution {
    /// The immutable execution.
    pub fn execution(&self) -> &ToolExecution {
        &self.exec
    }

    /// The current operational signal (the caller's unless a wrapper replaced it).
    pub fn signal(&self) -> CancellationToken {
        match self.replaced.lock() {
            Ok(slot) => slot.clone().unwrap_or_else(|| self.exec.signal.clone()),
            Err(poisoned) => poisoned.into_inner().clone().unwrap_or_else(|| self.exec.signal.clone()),
        }
    }

    /// Replace the operational signal (`None` restores the caller's); returns the previous replacement.
    /// The body still observes the caller's cancellation through the fused signal.
    pub fn set_signal(&self, signal: Option<CancellationToken>) -> Option<CancellationToken> {
        match self.replaced.lock() {
            Ok(mut slot) => std::mem::replace(&mut *slot, signal),
            Err(poisoned) => std::mem::replace(&mut *poisoned.into_inner(), signal),
        }
    }

    fn replacement(&self) -> Option<CancellationToken> {
        match self.replaced.lock() {
            Ok(slot) => slot.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl std::fmt::Debug for DispatchExecution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DispatchExecution").field("exec", &self.exec).finish_non_exhaustive()
    }
}

/// What a `tools/execute` chain link resolves to: the result `next` produced, or one the wrapper authored.
#[derive(Debug)]
pub struct DispatchResult {
    result: ToolExecutionResult,
    /// The execution whose body stage produced (and validated) this result.
    canonical_for: Option<ExecutionToken>,
}

impl DispatchResult {
    /// A wrapper-authored result (a cached or synthesized one). A success is revalidated against the
    /// tool's output declaration and re-rendered; a failure is kept as is.
    pub fn authored(result: ToolExecutionResult) -> Self {
        Self { result, canonical_for: None }
    }

    /// A wrapper-authored success with canonical `value` (a cache hit): validated against the tool's output
    /// declaration and rendered by it, like any authored success.
    pub fn success(value: serde_json::Value) -> Self {
        Self::authored(ToolExecutionResult::Success {
            value,
            content: Vec::new(),
            meta: None,
            additional_contexts: Vec::new(),
            concludes_turn: false,
        })
    }

    /// A wrapper-authored failure (content `Error: <message>`), kept as is; unlike returning `Err` from
    /// the wrapper, post-execute listeners still see it.
    pub fn failure(failure: ToolFailure) -> Self {
        Self::authored(ToolExecutionResult::from_failure(failure))
    }

    /// The result.
    pub fn result(&self) -> &ToolExecutionResult {
        &self.result
    }

    /// Take the result out (it becomes wrapper-authored if returned again in a new `DispatchResult`).
    pub fn into_result(self) -> ToolExecutionResult {
        self.result
    }
}

/// The outcome of a `tools/execute` link: a result, or a thrown failure (final for the call).
pub type ExecuteOutcome = Result<DispatchResult, ToolFailure>;

/// One `tools/execute` around-wrapper (timeout, retry, metrics, caching).
pub trait ExecuteWrapper: Send + Sync {
    /// Wrap the rest of the chain.
    fn call<'a>(&'a self, exec: &'a DispatchExecution, next: ExecuteNext<'a>) -> BoxFuture<'a, ExecuteOutcome>;
}

struct FnWrapper<F>(F);

impl<F> ExecuteWrapper for FnWrapper<F>
where
    F: for<'a> Fn(&'a DispatchExecution, ExecuteNext<'a>) -> BoxFuture<'a, ExecuteOutcome> + Send + Sync,
{
    fn call<'a>(&'a self, exec: &'a DispatchExecution, next: ExecuteNext<'a>) -> BoxFuture<'a, ExecuteOutcome> {
        (self.0)(exec, next)
    }
}

/// A `tools/execute` wrapper from a closure.
pub fn execute_wrapper_fn<F>(f: F) -> Arc<dyn ExecuteWrapper>
where
    F: for<'a> Fn(&'a DispatchExecution, ExecuteNext<'a>) -> BoxFuture<'a, ExecuteOutcome> + Send + Sync + 'static,
{
    Arc::new(FnWrapper(f))
}

/// The rest of a `tools/execute` chain; consumed by [`ExecuteNext::run`].
pub struct ExecuteNext<'a> {
    chain: &'a [HookEntry<Arc<dyn ExecuteWrapper>>],
    dexec: &'a DispatchExecution,
    registry: &'a Registry,
    in_flight: &'a InFlight,
    call: &'a Call,
}

impl<'a> ExecuteNext<'a> {
    /// Run the next matching wrapper, or the body stage at the end of the chain.
    pub fn run(self) -> BoxFuture<'a, ExecuteOutcome> {
        if let Some((entry, tail)) = next_applying(self.chain, self.dexec.exec.agent.as_ref()) {
            return entry.hook.call(self.dexec, ExecuteNext { chain: tail, ..self });
        }
        let (registry, in_flight, call, dexec) = (self.registry, self.in_flight, self.call, self.dexec);
        Box::pin(async move {
            let (result, canonical) = body_stage(registry, in_flight, call, dexec.replacement(), Read::Stale).await;
            Ok(DispatchResult { result, canonical_for: canonical.then_some(call.exec.token) })
        })
    }
}

/// Dispatch one prepared call through a snapshot of `wrappers`; the body stage resolves the tool in
/// `registry` and runs the body under `in_flight`'s ceiling. With `Read::Fresh` and no wrapper in the
/// way, the body stage relies on prepare's last read of the caller's signal.
pub(crate) async fn run(
    wrappers: &HookList<Arc<dyn ExecuteWrapper>>,
    registry: &Registry,
    in_flight: &InFlight,
    call: &Call,
    read: Read,
) -> Stage {
    let mut result = if let Some(chain) = wrappers.snapshot_for(call.exec.agent.as_ref()) {
        let dexec = DispatchExecution { exec: Arc::clone(&call.exec), replaced: Mutex::new(None) };
        let next = ExecuteNext { chain: &chain, dexec: &dexec, registry, in_flight, call };
        let outcome = match Contained(next.run()).await {
            Ok(outcome) => outcome,
            Err(panic) => Err(ToolFailure::message(panic)),
        };
        let mut result = match outcome.and_then(|d| normalize(registry, call, d)) {
            Ok(result) => result,
            Err(failure) => return Stage::Final(ToolExecutionResult::from_failure(failure)),
        };
        replace_if_cancelled(call, &mut result);
        result
    } else {
        // No wrapper: the body stage directly, without boxing the chain. Its result is this execution's
        // own (a failure, or a success it validated), so there is nothing to normalize, and the body
        // stage read the signal after the body ran: the cancellation rule is applied already.
        body_stage(registry, in_flight, call, None, read).await.0
    };
    let state = &call.exec.state;
    let deferred = match state.deferred_any.load(Ordering::SeqCst) {
        false => Vec::new(),
        true => std::mem::take(&mut *state.deferred.lock().unwrap_or_else(|p| p.into_inner())),
    };
    if !deferred.is_empty() {
        let contexts = result.additional_contexts_mut();
        let tail = std::mem::replace(contexts, deferred);
        contexts.extend(tail);
    }
    Stage::Post(result)
}

/// Keep this execution's own canonical result; revalidate any other success under the active declaration.
fn normalize(registry: &Registry, call: &Call, dispatched: DispatchResult) -> Result<ToolExecutionResult, ToolFailure> {
    let DispatchResult { result, canonical_for } = dispatched;
    if canonical_for == Some(call.exec.token) || result.is_error() {
        return Ok(result);
    }
    let ToolExecutionResult::Success { value, additional_contexts, .. } = result else { return Ok(result) };
    let exec = &call.exec;
    let Some(tool) = registry.resolve_execution(&exec.name, exec.agent.as_ref(), exec.parent.is_some()) else {
        crate::value::dismantle(value);
        return Err(ToolFailure::unknown_tool(&exec.name));
    };
    let mut normalized = output::success(exec, &tool, value)?;
    *normalized.additional_contexts_mut() = additional_contexts;
    Ok(normalized)
}

/// The body stage; the flag says whether the result is this execution's canonical success. `replacement`
/// is the signal a wrapper put in place of the caller's, if any; with none and `Read::Fresh`, the caller's
/// signal is known live from the stage before.
async fn body_stage(
    registry: &Registry,
    in_flight: &InFlight,
    call: &Call,
    replacement: Option<CancellationToken>,
    read: Read,
) -> (ToolExecutionResult, bool) {
    let exec = &call.exec;
    let fused = match replacement {
        None => {
            if read == Read::Stale && exec.signal.is_cancelled() {
                return (ToolExecutionResult::aborted_before_dispatch(Vec::new()), false);
            }
            Fused::Caller
        }
        Some(wrapper) => {
            if wrapper.is_cancelled() || exec.signal.is_cancelled() {
                return (ToolExecutionResult::aborted_before_dispatch(Vec::new()), false);
            }
            Fused::Relay { fused: CancellationToken::new(), caller: exec.signal.clone(), wrapper }
        }
    };
    let signal = fused.signal(&exec.signal);
    let Some(tool) = resolve_now(registry, call) else {
        return (ToolExecutionResult::from_failure(ToolFailure::unknown_tool(&exec.name)), false);
    };
    call.body_invoked.store(true, Ordering::Release);
    let violations = tool.argument_violations(&exec.arguments);
    if !violations.is_empty() {
        return (ToolExecutionResult::from_failure(ToolFailure::invalid_args(&violations)), false);
    }
    let relay = match &fused {
        Fused::Caller => None,
        Fused::Relay { fused, .. } => Some(fused.clone()),
    };
    let ctx = ToolRunContext::new(relay, Arc::clone(exec));
    let body = &tool.def.execute;
    let returned = match contain(|| body(Arc::clone(&exec.arguments), ctx)) {
        Ok(future) => match fused.drive(in_flight.bound(exec, signal, Contained(future)), &exec.state.replacement_first).await {
            Ok(returned) => returned,
            Err(panic) => Err(ToolFailure::message(panic)),
        },
        Err(panic) => Err(ToolFailure::message(panic)),
    };
    let result = match returned {
        Ok(value) => match output::success(exec, &tool, value) {
            Ok(result) => result,
            Err(failure) => return (ToolExecutionResult::from_failure(failure), false),
        },
        Err(failure) => return (ToolExecutionResult::from_failure(failure), false),
    };
    if signal.is_cancelled() {
        if let ToolExecutionResult::Success { value, .. } = result {
            crate::value::dismantle(value);
        }
        return (ToolExecutionResult::aborted(Vec::new()), false);
    }
    (result, true)
}

/// The definition the call executes now: the one visible at entry while the registry is unchanged (the
/// reserved `run_code` name always resolves again: its definition follows the mounted code runtime), else
/// a fresh resolution. The entry's definition is borrowed from the call: cloning its `Arc` would cost two
/// atomic operations per call for nothing.
fn resolve_now<'a>(registry: &Registry, call: &'a Call) -> Option<Resolved<'a>> {
    let exec = &call.exec;
    match &call.visible {
        Some(tool) if exec.name != RUN_CODE_NAME && registry.unchanged_since(call.generation) => Some(Resolved::Visible(tool)),
        _ => registry.resolve_execution(&exec.name, exec.agent.as_ref(), exec.parent.is_some()).map(Resolved::Fresh),
    }
}

/// The definition [`resolve_now`] found: the call's own from entry, or a fresh resolution.
enum Resolved<'a> {
    Visible(&'a RegisteredTool),
    Fresh(Arc<RegisteredTool>),
}

impl std::ops::Deref for Resolved<'_> {
    type Target = RegisteredTool;

    fn deref(&self) -> &RegisteredTool {
        match self {
            Self::Visible(tool) => tool,
            Self::Fresh(tool) => tool,
        }
    }
}

/// The body's signal: the caller's own, or a relay cancelled by the caller or the wrapper signal.
enum Fused {
    Caller,
    Relay { fused: CancellationToken, caller: CancellationToken, wrapper: CancellationToken },
}

impl Fused {
    /// The signal the body observes (`caller`: the caller's).
    fn signal<'a>(&'a self, caller: &'a CancellationToken) -> &'a CancellationToken {
        match self {
            Self::Caller => caller,
            Self::Relay { fused, .. } => fused,
        }
    }

    /// Await `body` to completion while relaying cancellation into the fused signal; `replacement_first`
    /// is set when the wrapper's signal is the source that aborted first (the body's reason then is the
    /// replacement's, not the caller's).
    async fn drive<B, T>(&self, body: B, replacement_first: &AtomicBool) -> Result<T, String>
    where
        B: Future<Output = Result<T, String>> + Unpin,
    {
        match self {
            Self::Caller => body.await,
            Self::Relay { fused, caller, wrapper } => {
                Relay {
                    body,
                    caller: Box::pin(caller.cancelled()),
                    wrapper: Box::pin(wrapper.cancelled()),
                    fused: Some(fused),
                    replacement_first,
                }
                .await
            }
        }
    }
}

struct Relay<'b, B> {
    body: B,
    caller: Pin<Box<WaitForCancellationFuture<'b>>>,
    wrapper: Pin<Box<WaitForCancellationFuture<'b>>>,
    fused: Option<&'b CancellationToken>,
    replacement_first: &'b AtomicBool,
}

impl<B: Future + Unpin> Future for Relay<'_, B> {
    type Output = B::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if this.fused.is_some() {
            // The caller is polled first: when both fired since the last poll, the caller's reason wins.
            let caller = this.caller.as_mut().poll(cx).is_ready();
            let fired = caller || this.wrapper.as_mut().poll(cx).is_ready();
            if fired {
                if !caller {
                    this.replacement_first.store(true, Ordering::SeqCst);
                }
                if let Some(fused) = this.fused.take() {
                    fused.cancel();
                }
            }
        }
        Pin::new(&mut this.body).poll(cx)
    }
}
