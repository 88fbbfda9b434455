//! Hook plumbing: the `tools/pre-execute` vocabulary ([`PreExecuteListener`], [`Next`], [`PreToolDecision`]),
//! the `tools/post-execute` one, guards and result observers; and, in `list.rs`, the copy-on-write
//! listener lists (`HookList`) snapshotted cheaply when a stage starts, the RAII [`HookGuard`] and the
//! one-at-a-time mount point (`Slot`: the approval seam, the code runtime); in `session.rs`, the session
//! log seam ([`SessionEntry`] observers).
//!
//! # Order
//! Listeners run in registration order; a scoped listener (registered for an agent) sees only calls of that
//! agent or of scopes nested in it, interleaved with global listeners by registration order.
//!
//! Spec: PIPE-002..PIPE-008, PIPE-011, PIPE-012, PIPE-021, SCOPE-022, SCOPE-024, RUN-058.

mod list;
mod session;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::callback::BoxFuture;
use crate::error::ToolFailure;
use crate::execution::ToolExecution;
use crate::result::ToolExecutionResult;

pub use self::list::{HookEntry, HookGuard};
pub use self::session::{SessionAppendObserver, SessionEntry};
pub(crate) use self::session::SessionLog;
pub(crate) use self::list::{HookList, Slot, Snapshot, next_applying, next_id, remember, remembered};

/// A `tools/pre-execute` decision. Input rewrite is deliberately not offered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreToolDecision {
    /// Proceed (to guards).
    Allow,
    /// Deny with a reason; content becomes `Error: <reason>`.
    Deny {
        /// The denial reason.
        reason: String,
    },
    /// Ask for approval; without an approval seam this degrades to a denial.
    Ask {
        /// Optional reason, used as the denial reason when degrading.
        reason: Option<String>,
    },
}

impl PreToolDecision {
    /// Deny with `reason`: the call fails with content `Error: <reason>` and its body never runs.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::Deny { reason: reason.into() }
    }

    /// Ask the mounted approval seam, with `reason` shown to the approver (and used as the denial reason
    /// when no seam is mounted).
    pub fn ask(reason: impl Into<String>) -> Self {
        Self::Ask { reason: Some(reason.into()) }
    }
}

/// The outcome of a pre-execute listener: a decision, or a thrown failure (the call then fails with it).
pub type PreExecuteOutcome = Result<PreToolDecision, ToolFailure>;

/// One link of the `tools/pre-execute` waterfall. Call `next.run()` to defer to the rest of the chain
/// (ending in the default `Allow`), or return a decision without calling it to veto the rest.
pub trait PreExecuteListener: Send + Sync {
    /// Decide for one execution.
    fn call<'a>(&'a self, exec: &'a ToolExecution, next: Next<'a>) -> BoxFuture<'a, PreExecuteOutcome>;
}

struct FnListener<F>(F);

impl<F> PreExecuteListener for FnListener<F>
where
    F: for<'a> Fn(&'a ToolExecution, Next<'a>) -> BoxFuture<'a, PreExecuteOutcome> + Send + Sync,
{
    fn call<'a>(&'a self, exec: &'a ToolExecution, next: Next<'a>) -> BoxFuture<'a, PreExecuteOutcome> {
        (self.0)(exec, next)
    }
}

/// A pre-execute listener from a closure, e.g.
/// `pre_execute_fn(|exec, next| Box::pin(async move { next.run().await }))`. A listener that only defers
/// can return `next.run()` itself (`pre_execute_fn(|_, next| next.run())`): it is already boxed, so
/// wrapping it again costs an allocation per call.
pub fn pre_execute_fn<F>(f: F) -> Arc<dyn PreExecuteListener>
where
    F: for<'a> Fn(&'a ToolExecution, Next<'a>) -> BoxFuture<'a, PreExecuteOutcome> + Send + Sync + 'static,
{
    Arc::new(FnListener(f))
}

/// The rest of a waterfall chain. Consumed by [`Next::run`], so it can run at most once.
pub struct Next<'a> {
    pub(crate) chain: &'a [HookEntry<Arc<dyn PreExecuteListener>>],
    pub(crate) exec: &'a ToolExecution,
}

impl<'a> Next<'a> {
    /// Run the next matching listener, or resolve to the default `Allow` at the end of the chain.
    pub fn run(self) -> BoxFuture<'a, PreExecuteOutcome> {
        match next_applying(self.chain, self.exec.agent.as_ref()) {
            Some((entry, tail)) => entry.hook.call(self.exec, Next { chain: tail, exec: self.exec }),
            None => Box::pin(EndOfChain(allow)),
        }
    }
}

/// The end of a chain: a future resolving at once to what the function item `F` builds. A function item
/// is zero-sized, so the future is too, and boxing it as a [`BoxFuture`] allocates nothing.
struct EndOfChain<F>(F);

impl<F: Fn() -> T + Unpin, T> Future for EndOfChain<F> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        Poll::Ready((self.0)())
    }
}

fn allow() -> PreExecuteOutcome {
    Ok(PreToolDecision::Allow)
}

fn accept() -> PostExecuteOutcome {
    Ok(PostToolDecision::accept())
}

/// A synchronous monotonic guard: `Some(reason)` denies.
pub type GuardFn = Arc<dyn Fn(&ToolExecution) -> Option<String> + Send + Sync>;

/// A guard that may throw, as an upstream guard callback can: `Err` makes the call fail with that failure,
/// final (later guards, `tools/execute`, the body and post-execute are skipped; PIPE-010). Register with
/// [`ToolRuntime::guard_fallible`](crate::ToolRuntime::guard_fallible); a [`GuardFn`] is the
/// never-throwing case.
pub type FallibleGuardFn = Arc<dyn Fn(&ToolExecution) -> Result<Option<String>, ToolFailure> + Send + Sync>;

/// A `tools/result` observer: sees the frozen final result exactly once per execution.
pub type ResultObserver = Arc<dyn Fn(&ToolExecution, &ToolExecutionResult) + Send + Sync>;

/// A log sink: receives each warning the pipeline logs instead of failing a call (upstream's
/// `ctx.logger.warn`), e.g. `tool "echo" (c1): tools/result observer failed: <message>`.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// A `tools/change` observer: called once per effective registration or disposal of a tool.
pub type ChangeObserver = Arc<dyn Fn() + Send + Sync>;

/// A [`GuardFn`] from a closure (every hook kind has a `*_fn` constructor: [`pre_execute_fn`],
/// [`guard_fn`], [`fallible_guard_fn`], [`execute_wrapper_fn`](crate::execute_wrapper_fn), [`post_execute_fn`], [`result_observer_fn`],
/// [`change_observer_fn`]).
pub fn guard_fn<F>(f: F) -> GuardFn
where
    F: Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static,
{
    Arc::new(f)
}

/// A [`FallibleGuardFn`] from a closure.
pub fn fallible_guard_fn<F>(f: F) -> FallibleGuardFn
where
    F: Fn(&ToolExecution) -> Result<Option<String>, ToolFailure> + Send + Sync + 'static,
{
    Arc::new(f)
}

/// A [`ResultObserver`] from a closure.
pub fn result_observer_fn<F>(f: F) -> ResultObserver
where
    F: Fn(&ToolExecution, &ToolExecutionResult) + Send + Sync + 'static,
{
    Arc::new(f)
}

/// A [`ChangeObserver`] from a closure.
pub fn change_observer_fn<F>(f: F) -> ChangeObserver
where
    F: Fn() + Send + Sync + 'static,
{
    Arc::new(f)
}

/// A `tools/post-execute` decision.
#[derive(Clone, Debug, PartialEq)]
pub enum PostToolDecision {
    /// Keep the outcome; optionally replace `content` or (for successes) `value` — never both — and
    /// append contexts after the tool-deferred ones.
    Accept {
        /// Replacement content (the canonical value and metadata are kept).
        content: Option<Vec<serde_json::Value>>,
        /// Replacement value: revalidated against the output schema and re-rendered.
        value: Option<serde_json::Value>,
        /// Contexts appended after the result's own.
        additional_contexts: Vec<serde_json::Value>,
    },
    /// Turn the outcome into a valueless failure whose content is `feedback`; tool-deferred contexts are
    /// discarded and only these contexts remain.
    Block {
        /// Corrective content; the error message is its text blocks joined by newlines.
        feedback: Vec<serde_json::Value>,
        /// The only contexts of the blocked result.
        additional_contexts: Vec<serde_json::Value>,
    },
}

impl PostToolDecision {
    /// A plain accept.
    pub fn accept() -> Self {
        Self::Accept { content: None, value: None, additional_contexts: Vec::new() }
    }

    /// Accept with the model-facing content replaced (the canonical value and metadata are kept).
    pub fn replace_content(content: Vec<serde_json::Value>) -> Self {
        Self::Accept { content: Some(content), value: None, additional_contexts: Vec::new() }
    }

    /// Accept a success with its canonical value replaced: revalidated against the output declaration and
    /// re-rendered.
    pub fn replace_value(value: serde_json::Value) -> Self {
        Self::Accept { content: None, value: Some(value), additional_contexts: Vec::new() }
    }

    /// Turn the outcome into a failure whose content is `feedback` (its text is the error message).
    pub fn block(feedback: Vec<serde_json::Value>) -> Self {
        Self::Block { feedback, additional_contexts: Vec::new() }
    }

    /// The same decision with `contexts` appended to its additional contexts.
    pub fn with_contexts(mut self, contexts: impl IntoIterator<Item = serde_json::Value>) -> Self {
        match &mut self {
            Self::Accept { additional_contexts, .. } | Self::Block { additional_contexts, .. } => {
                additional_contexts.extend(contexts)
            }
        }
        self
    }
}

/// The outcome of a post-execute listener: a decision, or a thrown failure (the call then fails with it).
pub type PostExecuteOutcome = Result<PostToolDecision, ToolFailure>;

/// One link of the `tools/post-execute` waterfall; `next.run()` defers to the rest of the chain (ending in
/// a plain accept).
pub trait PostExecuteListener: Send + Sync {
    /// Decide on one dispatched result.
    fn call<'a>(
        &'a self,
        exec: &'a ToolExecution,
        result: &'a ToolExecutionResult,
        next: PostNext<'a>,
    ) -> BoxFuture<'a, PostExecuteOutcome>;
}

struct FnPostListener<F>(F);

impl<F> PostExecuteListener for FnPostListener<F>
where
    F: for<'a> Fn(&'a ToolExecution, &'a ToolExecutionResult, PostNext<'a>) -> BoxFuture<'a, PostExecuteOutcome>
        + Send
        + Sync,
{
    fn call<'a>(
        &'a self,
        exec: &'a ToolExecution,
        result: &'a ToolExecutionResult,
        next: PostNext<'a>,
    ) -> BoxFuture<'a, PostExecuteOutcome> {
        (self.0)(exec, result, next)
    }
}

/// A post-execute listener from a closure; one that only defers returns `next.run()` itself
/// (`post_execute_fn(|_, _, next| next.run())`), already boxed.
pub fn post_execute_fn<F>(f: F) -> Arc<dyn PostExecuteListener>
where
    F: for<'a> Fn(&'a ToolExecution, &'a ToolExecutionResult, PostNext<'a>) -> BoxFuture<'a, PostExecuteOutcome>
        + Send
        + Sync
        + 'static,
{
    Arc::new(FnPostListener(f))
}

/// The rest of a post-execute chain; consumed by [`PostNext::run`].
pub struct PostNext<'a> {
    pub(crate) chain: &'a [HookEntry<Arc<dyn PostExecuteListener>>],
    pub(crate) exec: &'a ToolExecution,
    pub(crate) result: &'a ToolExecutionResult,
}

impl<'a> PostNext<'a> {
    /// Run the next matching listener, or resolve to a plain accept at the end of the chain.
    pub fn run(self) -> BoxFuture<'a, PostExecuteOutcome> {
        match next_applying(self.chain, self.exec.agent.as_ref()) {
            Some((entry, tail)) => entry.hook.call(self.exec, self.result, PostNext { chain: tail, ..self }),
            None => Box::pin(EndOfChain(accept)),
        }
    }
}
