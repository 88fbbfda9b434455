//! The tool-call timeout policy (upstream `@deepseek-ai/dsh-tool-call-timeout-policy@0.1.0-rc.8`): a
//! `tools/execute` wrapper that, for a tool whose visible definition declares `timeout_ms`, arms that
//! deadline on the operational signal for the rest of the chain and, when its own timer fired first,
//! replaces the result with `TOOL_TIMEOUT`. A tool declaring no budget passes through untouched.
//!
//! As upstream, the deadline is cooperative: the derived signal is cancelled, and the body is still
//! awaited to its end (never raced or abandoned), so a body that ignores its signal keeps running — its
//! result is replaced when it returns. [`TimeoutPolicy::hard`] adds an opt-in Rust-only bound: once the
//! deadline plus a grace period has passed, the rest of the chain (the body included) is dropped.
//!
//! Replacement is keyed off the signal, not the result: if the caller's (or an outer wrapper's)
//! cancellation came first, the deadline did not win and the result passes through (the pipeline then
//! reports `ABORTED`). A failure thrown by the rest of the chain is never replaced.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::callback::BoxFuture;
use crate::error::{ErrorCode, ToolFailure};
use crate::hooks::HookGuard;
use crate::pipeline::dispatch::{DispatchExecution, DispatchResult, ExecuteNext, ExecuteOutcome, ExecuteWrapper};
use crate::registry::Registry;
use crate::result::ToolExecutionResult;
use crate::runtime::ToolRuntime;
use crate::scope::ScopeKey;
use crate::value::js_number_string;

/// Largest budget the timer arms (upstream `MAX_TIMER_DELAY_MS`, Node's timer limit).
pub const MAX_TIMER_DELAY_MS: f64 = 2_147_483_647.0;

/// The result substituted when the deadline wins (upstream `toolTimeoutResult`): content
/// `Error: tool call timed out after <ms>ms`, error `{ message: "tool call timed out after <ms>ms",
/// info: { name: "ToolTimeoutError", code: "TOOL_TIMEOUT" } }`, `<ms>` printed as JavaScript prints
/// the number.
pub fn tool_timeout_result(timeout_ms: f64) -> ToolExecutionResult {
    let message = format!("tool call timed out after {}ms", js_number_string(timeout_ms));
    ToolExecutionResult::from_failure(ToolFailure::harness(message, "ToolTimeoutError", ErrorCode::TOOL_TIMEOUT))
}

/// The timeout wrapper. Install it with [`install`](Self::install); it reads each call's budget from
/// the definition visible to the call (`ToolDefinition::timeout_ms`) at dispatch time. Its timer is
/// tokio's: executions must run on a runtime with the time driver enabled (`enable_time`/`enable_all`),
/// else the wrapper's panic is contained and the call fails with it.
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools::wrappers::TimeoutPolicy;
/// use dsh_tools::{ToolRuntime, ToolsConfig};
///
/// let runtime = ToolRuntime::new(ToolsConfig::default());
/// let _timeouts = TimeoutPolicy::new().install(&runtime, None);
/// // Every tool registered with `timeout_ms: Some(200.0)` now fails with TOOL_TIMEOUT when its
/// // deadline passes first.
/// ```
#[derive(Clone, Debug, Default)]
pub struct TimeoutPolicy {
    hard_grace: Option<Duration>,
}

impl TimeoutPolicy {
    /// Upstream's cooperative policy.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also stop waiting `grace` after the deadline: the rest of the chain, body included, is dropped
    /// (its destructors run; a body that spawned work of its own keeps that work) and `TOOL_TIMEOUT` is
    /// returned. Not upstream behaviour, where a promise cannot be dropped.
    pub fn hard(mut self, grace: Duration) -> Self {
        self.hard_grace = Some(grace);
        self
    }

    /// Register the wrapper on `runtime` (globally, or for one agent scope), after the wrappers already
    /// there; dropping the guard removes it.
    pub fn install(self, runtime: &ToolRuntime, scope: Option<&ScopeKey>) -> HookGuard {
        let wrapper = TimeoutWrapper { registry: Arc::downgrade(&runtime.pipeline().registry), hard_grace: self.hard_grace };
        runtime.on_execute(scope, Arc::new(wrapper))
    }
}

struct TimeoutWrapper {
    /// Weak: the runtime owns this wrapper through its hook table.
    registry: Weak<Registry>,
    hard_grace: Option<Duration>,
}

impl ExecuteWrapper for TimeoutWrapper {
    fn call<'a>(&'a self, dexec: &'a DispatchExecution, next: ExecuteNext<'a>) -> BoxFuture<'a, ExecuteOutcome> {
        Box::pin(async move {
            let exec = dexec.execution();
            let declared = self
                .registry
                .upgrade()
                .and_then(|registry| registry.resolve(&exec.name, exec.agent.as_ref()))
                .and_then(|tool| tool.def.timeout_ms);
            // `<= 0` arms no timer (upstream `deadline`); NaN is not `<= 0` and fails the range check below.
            let Some(timeout_ms) = declared.filter(|t| t.is_nan() || *t > 0.0) else {
                return next.run().await;
            };
            if !(timeout_ms.is_finite() && timeout_ms <= MAX_TIMER_DELAY_MS) {
                return Err(ToolFailure::message(format!(
                    "deadline timeoutMs must be a positive finite number no greater than {}",
                    js_number_string(MAX_TIMER_DELAY_MS)
                )));
            }
            let upstream = dexec.signal();
            let derived = upstream.child_token();
            let previous = dexec.set_signal(Some(derived.clone()));
            let budget = Duration::from_secs_f64(timeout_ms / 1000.0);
            let deadline = tokio::time::sleep(budget);
            let cutoff = tokio::time::sleep(budget + self.hard_grace.unwrap_or(Duration::ZERO));
            tokio::pin!(deadline, cutoff);
            let mut run = next.run();
            let mut won = false;
            let outcome = loop {
                tokio::select! {
                    biased;
                    outcome = &mut run => break Some(outcome),
                    () = &mut deadline, if !derived.is_cancelled() => {
                        // The deadline wins only if nothing upstream cancelled first.
                        won = true;
                        derived.cancel();
                    }
                    () = &mut cutoff, if won && self.hard_grace.is_some() => break None,
                }
            };
            drop(run);
            dexec.set_signal(previous);
            match outcome {
                None => Ok(DispatchResult::authored(tool_timeout_result(timeout_ms))),
                Some(Ok(_)) if won => Ok(DispatchResult::authored(tool_timeout_result(timeout_ms))),
                Some(outcome) => outcome,
            }
        })
    }
}
