//! [`ToolContext`]: what a typed tool's body receives — the call's identity, its cancellation signal (and
//! the coded way to stop on it: [`ToolContext::until_cancelled`], [`ToolContext::check_cancelled`]) and
//! `defer_context` — as methods over the pipeline's [`ToolRunContext`].
//!
//! Spec: CANC-003 (a body's own failure is kept: `ToolFailure::aborted` makes that failure the coded one).

use std::future::Future;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::ToolFailure;
use crate::execution::ToolRunContext;
use crate::scope::ScopeKey;

/// The context of one typed tool call.
///
/// A body that runs for long should stop when the call is cancelled: cancellation is cooperative, and a
/// started body always runs to its end. The idiom is [`until_cancelled`](Self::until_cancelled) around
/// the work (or [`check_cancelled`](Self::check_cancelled) between steps) with `?`: the body then returns
/// [`ToolFailure::aborted`] and the call's result is the coded `ABORTED` one. A success the body returns
/// once the signal is cancelled becomes `ABORTED` too; any other `Err` is kept as the result, uncoded.
///
/// ```
/// use std::time::Duration;
/// use dsh_tools::typed::{JsonSchema, tool};
/// use dsh_tools::{CancellationToken, ErrorCode, ToolExecutionInput, ToolRuntime};
/// # #[derive(serde::Deserialize, JsonSchema)] struct Empty {}
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let rt = ToolRuntime::new(Default::default());
/// let slow = tool("slow", "Take a while", |_: Empty, ctx| async move {
///     ctx.until_cancelled(tokio::time::sleep(Duration::from_secs(60))).await?; // Err(aborted) if cancelled
///     Ok("done")
/// })?;
/// let _slow = rt.register(slow, None)?;
/// let signal = CancellationToken::new();
/// let call = ToolExecutionInput::new("c1", "slow", serde_json::json!({})).with_signal(signal.clone());
/// let (result, ()) = tokio::join!(rt.execute(call), async {
///     tokio::time::sleep(Duration::from_millis(10)).await;
///     signal.cancel(); // the user pressed Esc
/// });
/// assert_eq!(result.error_code(), Some(&ErrorCode::ABORTED));
/// assert_eq!(result.text(), "Error: tool call aborted");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct ToolContext {
    run: ToolRunContext,
}

impl ToolContext {
    pub(super) fn new(run: ToolRunContext) -> Self {
        Self { run }
    }

    /// The model's call id.
    pub fn call_id(&self) -> &str {
        self.run.call_id()
    }

    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        self.run.name()
    }

    /// The agent scope that made the call (`None`: a global call).
    pub fn agent(&self) -> Option<&ScopeKey> {
        self.run.agent()
    }

    /// The call's cancellation signal (clone it into spawned work).
    pub fn signal(&self) -> &CancellationToken {
        self.run.signal()
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.run.signal().is_cancelled()
    }

    /// Resolves when the call is cancelled; `select!` it against the work.
    pub async fn cancelled(&self) {
        self.run.signal().cancelled().await
    }

    /// Run `work` until it completes or the call is cancelled, whichever is first. On cancellation `work`
    /// is dropped and this is `Err(`[`ToolFailure::aborted`]`)`: return it with `?` and the call's result
    /// is the coded `ABORTED` one. A signal already cancelled wins before `work` is polled.
    pub async fn until_cancelled<F: Future>(&self, work: F) -> Result<F::Output, ToolFailure> {
        let signal = self.run.signal();
        tokio::select! {
            biased;
            () = signal.cancelled() => Err(ToolFailure::aborted()),
            output = work => Ok(output),
        }
    }

    /// `Err(`[`ToolFailure::aborted`]`)` once the call is cancelled, else `Ok(())`: `ctx.check_cancelled()?`
    /// between the steps of a body that cannot be interrupted inside one.
    pub fn check_cancelled(&self) -> Result<(), ToolFailure> {
        if self.is_cancelled() { Err(ToolFailure::aborted()) } else { Ok(()) }
    }

    /// Defer one context (a user-message value) until this call's final result reaches the agent loop:
    /// it is kept even when the body then fails or the call is cancelled, in deferral order.
    pub fn defer_context(&self, context: Value) {
        self.run.defer_context(context)
    }

    /// Mark this call's successful result as the end of the agent's turn: it then reports
    /// [`ToolExecutionResult::concludes_turn`](crate::ToolExecutionResult::concludes_turn). A failure
    /// (an `Err` from the body, output the schema rejects, cancellation) never ends the turn.
    pub fn conclude_turn(&self) {
        self.run.conclude_turn()
    }

    /// The untyped run context, for anything this wrapper does not expose.
    pub fn run_context(&self) -> &ToolRunContext {
        &self.run
    }
}
