//! A concurrency limit: a `tools/execute` wrapper that lets at most `n` calls run the rest of the chain
//! (the body included) at once; the others wait for a permit in arrival order. Policy (pre-execute,
//! guards) has already run when a call waits here. A call whose operational signal is cancelled while
//! waiting goes on without a permit, so the body stage reports `ABORTED_BEFORE_DISPATCH` at once.
//!
//! The `run_code` transport call itself takes no permit (its sub-calls each do): a program holding one
//! while its sub-calls wait for one would deadlock a limit of 1. The same hazard holds for a tool body
//! that executes other tools through the same runtime and waits for them: keep such tools outside the
//! limit (install it for a scope they are not in) or size it above the nesting depth.

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::callback::BoxFuture;
use crate::hooks::HookGuard;
use crate::pipeline::dispatch::{DispatchExecution, ExecuteNext, ExecuteOutcome, ExecuteWrapper};
use crate::presentation::RUN_CODE_NAME;
use crate::runtime::ToolRuntime;
use crate::scope::ScopeKey;

/// At most `permits` calls in the rest of the chain at once.
///
/// ```
/// use dsh_tools::wrappers::ConcurrencyLimit;
/// use dsh_tools::{ToolRuntime, ToolsConfig};
///
/// let runtime = ToolRuntime::new(ToolsConfig::default());
/// let limit = ConcurrencyLimit::new(4);
/// let _guard = limit.install(&runtime, None);
/// assert_eq!(limit.available(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct ConcurrencyLimit {
    semaphore: Arc<Semaphore>,
}

impl ConcurrencyLimit {
    /// A limit of `permits` concurrent calls (at least one).
    pub fn new(permits: usize) -> Self {
        Self { semaphore: Arc::new(Semaphore::new(permits.max(1))) }
    }

    /// Permits free right now.
    pub fn available(&self) -> usize {
        self.semaphore.available_permits()
    }

    /// Register the limit on `runtime` (globally, or for one agent scope); clones share one pool.
    pub fn install(&self, runtime: &ToolRuntime, scope: Option<&ScopeKey>) -> HookGuard {
        runtime.on_execute(scope, Arc::new(self.clone()))
    }
}

impl ExecuteWrapper for ConcurrencyLimit {
    fn call<'a>(&'a self, dexec: &'a DispatchExecution, next: ExecuteNext<'a>) -> BoxFuture<'a, ExecuteOutcome> {
        Box::pin(async move {
            if dexec.execution().name == RUN_CODE_NAME && dexec.execution().parent.is_none() {
                return next.run().await;
            }
            let signal = dexec.signal();
            let caller = dexec.execution().signal.clone();
            let permit = tokio::select! {
                permit = Arc::clone(&self.semaphore).acquire_owned() => permit.ok(),
                () = signal.cancelled() => None,
                () = caller.cancelled() => None,
            };
            let outcome = next.run().await;
            drop(permit);
            outcome
        })
    }
}
