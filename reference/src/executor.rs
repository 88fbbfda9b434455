//! The executor seam (seed 002's `ctx.tools.setExecutor()`): a per-scope [`ToolExecutor`] decides what the
//! model sees ([`ToolExecutor::describe`]: the request surface), which prompt sections it contributes
//! ([`ToolExecutor::sections`], registered in its scope on its behalf), and how a model call is executed
//! ([`ToolExecutor::execute`], with a [`NativeExecutor`] to delegate to: the whole pipeline). One executor
//! per scope; the nearest scope on a caller's chain wins, then the global one; with none the native
//! executor applies, which is exactly profile dsh-tools-0.1's behaviour.
//!
//! # Decisions the seed leaves open
//! - **Delegation goes to the native executor only, never to an executor further out.** The nearest
//!   executor is the whole policy of the scopes under it (the seed's registry "recognises one" per scope,
//!   and the preset's executor overrides the base one rather than wrapping it); handing a call on to an
//!   outer executor would make what a preset masks depend on whatever a host installs above it, and a
//!   chain's order would need rules the seed does not give. An executor that wants an outer policy calls
//!   it itself.
//! - **A turn keeps parallel dispatch for the calls an executor passes through** (CDM-047): the seed's
//!   executor answers a batch; here each call is executed on its own, and [`ToolExecutor::route`] says
//!   per call whether the executor needs to see it (`Own`, with its execution mode) or would delegate it
//!   unchanged (`Native`, run in the turn's native lanes).
//! - **An executor's own answer is observed** (CDM-046): a result the executor returns without the native
//!   executor reaches the `tools/result` observers exactly once, published by the facade, so no executor
//!   can keep a call out of an audit trail.
//!
//! This module holds the trait, the delegate handle and the table (`ExecutorTable`); the facade
//! (`runtime/execute.rs`) routes `execute` through it and the prompt contribution (`contribution.rs`) asks it for
//! the request surface. It knows nothing of the pipeline: the delegate is a closure the facade supplies.
//!
//! Spec: CDM-001..CDM-007, CDM-046, CDM-047.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::callback::BoxFuture;
use crate::definition::ToolSchema;
use crate::execution::{ExecutionMode, ToolExecutionInput};
use crate::hooks::{HookGuard, next_id};
use crate::prompt::PromptSection;
use crate::result::ToolExecutionResult;
use crate::scope::ScopeKey;

/// A scope's tool executor: the presentation and execution policy of every agent on whose scope chain it
/// is the nearest (seed 002's `ToolExecutor`).
pub trait ToolExecutor: Send + Sync + 'static {
    /// The model-visible schemas, given every definition the caller can see in presentation order. This
    /// *is* the request surface (CDM-001); it receives no scope, only the definitions.
    fn describe(&self, definitions: Vec<ToolSchema>) -> Vec<ToolSchema>;

    /// Prompt sections the prompt service registers in the executor's scope on its behalf when it is
    /// installed (a same-named section in that scope then collides, CDM-006). Default: none.
    fn sections(&self) -> Vec<PromptSection> {
        Vec::new()
    }

    /// How a turn may schedule `input` (seed 002's executor answers a *batch*, seeing a turn's calls
    /// together; this is the part of that a per-call seam needs). Read by the turn executor
    /// ([`TurnExecutor`](crate::turn::TurnExecutor)) when the call reaches the head of its queue and by
    /// [`ToolRuntime::execution_mode`](crate::ToolRuntime::execution_mode). Default:
    /// `Own(Exclusive)`, the call through [`execute`](Self::execute) as one unit and an ordering barrier,
    /// which is right for any executor; an executor that passes most calls through declares them
    /// [`ExecutorRoute::Native`] so they keep the native lanes' parallel dispatch.
    fn route(&self, input: &ToolExecutionInput) -> ExecutorRoute {
        let _ = input;
        ExecutorRoute::Own(ExecutionMode::Exclusive)
    }

    /// Execute one model call. `native` runs the call through the whole pipeline; an executor that
    /// answers without it (a rejection) is the only code that sees the call before its result, which the
    /// facade then publishes to the `tools/result` observers (CDM-046).
    fn execute(&self, input: ToolExecutionInput, native: NativeExecutor) -> BoxFuture<'static, ToolExecutionResult>;
}

/// How a call under an executor may be scheduled ([`ToolExecutor::route`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutorRoute {
    /// The executor's `execute` would hand this call to the native executor unchanged: a turn runs it in
    /// its native lanes (policy in model order, the dispatch overlapping when the tool is
    /// concurrency-safe), exactly as with no executor, and `execute` is not called for it. Declaring a
    /// call `Native` that `execute` would answer or change lets it past the executor.
    Native,
    /// The call goes through the executor's `execute` as one unit: `Exclusive` makes it an ordering
    /// barrier, `Parallel` lets it overlap the turn's other parallel calls (within the pool's bound).
    Own(ExecutionMode),
}

impl fmt::Debug for dyn ToolExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ToolExecutor")
    }
}

/// What a [`NativeExecutor`] runs: one call through the pipeline.
pub(crate) type NativeRun = Arc<dyn Fn(ToolExecutionInput) -> BoxFuture<'static, ToolExecutionResult> + Send + Sync>;

/// The native executor (seed 002's `dsh-tool-executor-native`): describes every visible definition
/// unchanged and executes a call through the registry's whole pipeline (pre-execute, approval, guards,
/// wrappers, body, post-execute, result observers). Cheap to clone.
#[derive(Clone)]
pub struct NativeExecutor {
    run: NativeRun,
}

impl fmt::Debug for NativeExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NativeExecutor")
    }
}

impl NativeExecutor {
    pub(crate) fn new(run: NativeRun) -> Self {
        Self { run }
    }

    /// The native request surface: the definitions as they are.
    pub fn describe(&self, definitions: Vec<ToolSchema>) -> Vec<ToolSchema> {
        definitions
    }

    /// Run `input` through the whole pipeline; always exactly one result.
    pub fn execute(&self, input: ToolExecutionInput) -> BoxFuture<'static, ToolExecutionResult> {
        (self.run)(input)
    }
}

/// Why [`ToolRuntime::set_executor`](crate::ToolRuntime::set_executor) failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetExecutorErrorKind {
    /// The scope already holds an executor (CDM-003).
    AlreadySet,
    /// The prompt service rejected one of the executor's sections (CDM-006).
    Section,
}

/// A rejected [`ToolRuntime::set_executor`](crate::ToolRuntime::set_executor): nothing was installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetExecutorError {
    /// What failed.
    pub kind: SetExecutorErrorKind,
    /// The message, naming the scope or the section.
    pub message: String,
}

impl fmt::Display for SetExecutorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SetExecutorError {}

impl SetExecutorError {
    pub(crate) fn already_set(scope: Option<&ScopeKey>) -> Self {
        let scope = match scope {
            Some(scope) => format!("scope \"{}\"", scope.name()),
            None => "the global scope".to_owned(),
        };
        Self { kind: SetExecutorErrorKind::AlreadySet, message: format!("a tool executor is already set for {scope}") }
    }

    pub(crate) fn section(message: String) -> Self {
        Self { kind: SetExecutorErrorKind::Section, message }
    }
}

struct Entry {
    id: u64,
    scope: Option<ScopeKey>,
    executor: Arc<dyn ToolExecutor>,
}

/// The installed executors, at most one per scope (`None`: the global scope).
#[derive(Default)]
pub(crate) struct ExecutorTable {
    entries: Mutex<Vec<Entry>>,
    /// Whether any executor is installed, kept under the lock: every execute asks, and most runtimes
    /// install none, so the common answer comes without taking the lock.
    installed: AtomicBool,
}

impl ExecutorTable {
    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Install `executor` for `scope`; the id to [`remove`](Self::remove) it with. CDM-003.
    pub(crate) fn insert(&self, scope: Option<&ScopeKey>, executor: Arc<dyn ToolExecutor>) -> Result<u64, SetExecutorError> {
        let mut entries = self.lock();
        if entries.iter().any(|e| e.scope.as_ref() == scope) {
            return Err(SetExecutorError::already_set(scope));
        }
        let id = next_id();
        entries.push(Entry { id, scope: scope.cloned(), executor });
        self.installed.store(true, Ordering::Release);
        Ok(id)
    }

    /// Uninstall the entry `id` (a no-op once it is gone).
    pub(crate) fn remove(&self, id: u64) {
        let removed: Vec<Entry> = {
            let mut entries = self.lock();
            let (gone, kept) = std::mem::take(&mut *entries).into_iter().partition(|e| e.id == id);
            *entries = kept;
            self.installed.store(!entries.is_empty(), Ordering::Release);
            gone
        };
        drop(removed);
    }

    /// Uninstall the executor of `scope`, as disposing the scope does.
    pub(crate) fn remove_scope(&self, scope: &ScopeKey) {
        let removed: Vec<Entry> = {
            let mut entries = self.lock();
            let (gone, kept) = std::mem::take(&mut *entries).into_iter().partition(|e| e.scope.as_ref() == Some(scope));
            *entries = kept;
            self.installed.store(!entries.is_empty(), Ordering::Release);
            gone
        };
        drop(removed);
    }

    /// The executor that applies to a caller in `scope`: the nearest on its chain, else the global one.
    /// CDM-004.
    pub(crate) fn nearest(&self, scope: Option<&ScopeKey>) -> Option<Arc<dyn ToolExecutor>> {
        if !self.installed.load(Ordering::Acquire) {
            return None;
        }
        let entries = self.lock();
        let find = |s: Option<&ScopeKey>| entries.iter().find(|e| e.scope.as_ref() == s).map(|e| Arc::clone(&e.executor));
        scope.into_iter().flat_map(ScopeKey::chain).find_map(|s| find(Some(s))).or_else(|| find(None))
    }
}

/// The guard of an installation: uninstalls the entry, then drops the sections registered for it.
pub(crate) fn installation_guard(table: std::sync::Weak<ExecutorTable>, id: u64, sections: Vec<HookGuard>) -> HookGuard {
    HookGuard::new(move || {
        if let Some(table) = table.upgrade() {
            table.remove(id);
        }
        drop(sections);
    })
}

#[cfg(test)]
mod tests;
