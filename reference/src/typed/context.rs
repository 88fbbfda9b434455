//! [`ToolContext`]: what a typed tool's body receives — the call's identity, its cancellation signal and
//! `defer_context` — as methods over the pipeline's [`ToolRunContext`].

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::execution::ToolRunContext;
use crate::scope::ScopeKey;

/// The context of one typed tool call.
///
/// A body that runs for long should watch [`cancelled`](Self::cancelled) (or poll
/// [`is_cancelled`](Self::is_cancelled)): cancellation is cooperative, and a started body always runs to
/// its end. A success the body returns once the signal is cancelled becomes an `ABORTED` result; an
/// `Err` it returns is kept as the result.
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
