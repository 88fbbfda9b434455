//! The facade's execution: one call through the whole pipeline (or the agent's nearest executor), the
//! native executor, installing executors, the request surface they describe and execution modes.
//!
//! Spec: PIPE-018, CODE-011, CDM-001..CDM-007, CDM-046, CDM-047.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::callback::DropSafe;
use crate::definition::ToolSchema;
use crate::executor::{ExecutorRoute, NativeExecutor, SetExecutorError, ToolExecutor, installation_guard};
use crate::execution::{ExecutionMode, ToolExecutionInput};
use crate::hooks::HookGuard;
use crate::pipeline::Pipeline;
use crate::result::ToolExecutionResult;
use crate::scope::ScopeKey;

use super::ToolRuntime;

impl ToolRuntime {

    /// The pipeline, for the layer above the facade: the ready-made wrappers read definitions through
    /// its registry (weakly: the runtime owns those wrappers), the turn executor drives its stages.
    pub(crate) fn pipeline(&self) -> &Arc<Pipeline> {
        &self.inner.pipeline
    }

    /// Run one call through the whole pipeline; always exactly one result.
    ///
    /// # Dropping the future
    /// Once polled, the execution runs to its one published result even if this future is dropped
    /// (`tokio::time::timeout` elapsing, a `select!` taking another branch): the body is never dropped
    /// half-way, post-execute, the content finalizer and the `tools/result` observers
    /// ([`on_result`](Self::on_result)) all run, and only the returned value is lost. The execution runs
    /// inline while the future is polled; when it is dropped unfinished, the rest is spawned on the
    /// ambient tokio runtime. Consequences:
    /// - multi-thread runtime: the rest runs on its workers, as any task;
    /// - current-thread runtime: the rest runs only while that runtime is driven (`block_on`, or the
    ///   caller awaiting something); shutting the runtime down drops it, as tokio drops every task;
    /// - no ambient runtime (another executor): the rest finishes on a helper thread with its own
    ///   current-thread runtime; a body waiting on resources of a runtime that is gone may then never end.
    ///
    /// Dropping a future that was never polled starts nothing: no listener, guard, body or observer runs.
    /// (The entry stage — the argument snapshot, the definition visible at entry — is taken when
    /// `execute` is called, as upstream's `execute` takes it before its first await.) Dropping does not
    /// cancel: to stop a call, cancel its `input.signal` (the body sees it, and the result is `ABORTED`).
    ///
    /// # Executors
    /// When a [`ToolExecutor`] applies to `input.agent` ([`set_executor`](Self::set_executor)), the call
    /// goes to its `execute` with the [`NativeExecutor`] to delegate to (CDM-007); otherwise straight to
    /// the pipeline, as the native executor would. A result the executor answers without delegating
    /// (a rejection) is published to the `tools/result` observers ([`on_result`](Self::on_result)) like
    /// any other, exactly once (CDM-046).
    ///
    /// The future owns what it needs (it borrows nothing from `self`); which executor applies is decided
    /// when `execute` is called.
    pub fn execute(&self, input: ToolExecutionInput) -> impl Future<Output = ToolExecutionResult> + Send + 'static {
        // Built here rather than in an `async fn`: the call is moved once, into the one boxed future.
        match self.inner.executors.nearest(input.agent.as_ref()) {
            None => DropSafe::new(Arc::clone(&self.inner.pipeline).execute(input)),
            Some(executor) => {
                // An answer the executor makes without the native pipeline is published here (CDM-046).
                let delegated = Arc::new(AtomicBool::new(false));
                let native = self.native_executor_marking(Some(Arc::clone(&delegated)));
                let pipeline = Arc::clone(&self.inner.pipeline);
                let record = pipeline.answer_record(&input);
                // Lazy: the executor's `execute` (user code) runs at the first poll.
                DropSafe::new(async move {
                    let mut result = executor.execute(input, native).await;
                    if !delegated.load(Ordering::SeqCst) {
                        pipeline.publish_answer(record, &mut result);
                    }
                    result
                })
            }
        }
    }

    /// How the nearest executor of `input`'s agent routes it ([`ToolExecutor::route`]); `None` with no
    /// executor. The turn executor runs an `Own` call as one unit through [`execute`](Self::execute).
    pub(crate) fn executor_route(&self, input: &ToolExecutionInput) -> Option<ExecutorRoute> {
        self.inner.executors.nearest(input.agent.as_ref()).map(|executor| executor.route(input))
    }

    /// The native executor: the whole pipeline, without any installed executor in the way.
    pub fn native_executor(&self) -> NativeExecutor {
        self.native_executor_marking(None)
    }

    /// [`native_executor`](Self::native_executor), setting `delegated` when it is handed a call.
    fn native_executor_marking(&self, delegated: Option<Arc<AtomicBool>>) -> NativeExecutor {
        let pipeline = Arc::clone(&self.inner.pipeline);
        NativeExecutor::new(Arc::new(move |input| {
            if let Some(delegated) = &delegated {
                delegated.store(true, Ordering::SeqCst);
            }
            let pipeline = Arc::clone(&pipeline);
            Box::pin(Arc::clone(&pipeline).execute(input))
        }))
    }

    /// Install `executor` for `scope` (`None`: the global scope, under every agent without a nearer one):
    /// it describes the request surface and executes the model calls of every agent whose nearest
    /// executor it is (CDM-001, CDM-004, CDM-007). When this runtime contributes to a prompt
    /// ([`try_with_prompt`](Self::try_with_prompt)), the executor's [`sections`](ToolExecutor::sections)
    /// are registered in `scope` on its behalf, so a same-named section there collides (CDM-006). A
    /// second executor in one scope is rejected (CDM-003). Dropping the guard — or disposing the scope —
    /// uninstalls it (CDM-005).
    pub fn set_executor(&self, scope: Option<&ScopeKey>, executor: Arc<dyn ToolExecutor>) -> Result<HookGuard, SetExecutorError> {
        let sections = executor.sections();
        let id = self.inner.executors.insert(scope, executor)?;
        let mut registered = Vec::new();
        if let Some(link) = self.inner.prompt.get() {
            for section in sections {
                match link.section(scope, section) {
                    Ok(guard) => registered.push(guard),
                    Err(e) => {
                        self.inner.executors.remove(id);
                        return Err(SetExecutorError::section(e.message));
                    }
                }
            }
        }
        Ok(installation_guard(Arc::downgrade(&self.inner.executors), id, registered))
    }

    /// The model-visible schemas for `scope` as the nearest executor describes them (the request surface
    /// a prompt assembly shows, before `toolOrder`); with no executor, [`schemas`](Self::schemas).
    pub fn request_schemas(&self, scope: Option<&ScopeKey>) -> Vec<ToolSchema> {
        let schemas = self.schemas(scope);
        match self.inner.executors.nearest(scope) {
            Some(executor) => executor.describe(schemas),
            None => schemas,
        }
    }

    /// `Parallel` only when the visible definition's classifier returns exactly `Ok(true)` (DSL tools:
    /// and the arguments are valid); everything else — including a call the `code` collapse rejects
    /// (CODE-011) — is `Exclusive`. Under an installed executor, the mode its
    /// [`route`](ToolExecutor::route) gives a call it keeps (`Own`), the native classification for one it
    /// passes through (CDM-047).
    pub fn execution_mode(&self, input: &ToolExecutionInput) -> ExecutionMode {
        match self.executor_route(input) {
            Some(ExecutorRoute::Own(mode)) => mode,
            None | Some(ExecutorRoute::Native) => self.inner.pipeline.execution_mode(input),
        }
    }
}
