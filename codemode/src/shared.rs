//! What the plugin's executor and tools share: the runtime (weakly: the runtime owns them), the preset
//! scope label, the one view cache, the `code_run` executions now running (whose tokens mark their
//! program calls as nested), the code runtime, the state owners passed to it, the logger, and the `tools`
//! namespace's names per agent for the registry's current generation (issue 39: a run copies no schema).
//!
//! Spec: CDM-014, CDM-021, CDM-024, CDM-025.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dsh_tools::code::{BindingNames, CodeRuntime};
use dsh_tools::definition::ToolSchema;
use dsh_tools::hooks::LogSink;
use dsh_tools::{ExecutionToken, ScopeKey, ToolExecutionInput, ToolRuntime, WeakToolRuntime};

use crate::retention::Retention;
use crate::rules::{CODE_RUN_NAME, HOST_MOUNT_WARNING, PTC_ID_MARKER};
use crate::view::{CatalogView, ViewCache};

pub(crate) struct Shared {
    pub(crate) runtime: WeakToolRuntime,
    /// The preset's scope label; `None` when mounted at the host layer (name rule only).
    pub(crate) preset: Option<ScopeKey>,
    pub(crate) views: ViewCache,
    /// Tokens of the `code_run` executions running now: a call whose parent is one of them is nested.
    live_runs: Mutex<HashSet<ExecutionToken>>,
    pub(crate) code_runtime: Arc<dyn CodeRuntime>,
    /// The state owners passed to the code runtime, one per agent (REPL retention).
    pub(crate) retention: Arc<Retention>,
    logger: Option<LogSink>,
    warned: AtomicBool,
    /// The `tools` namespace's names per agent, for one registry generation.
    names: Mutex<(u64, ScopedNames)>,
}

/// The binding names kept for one generation, per agent.
type ScopedNames = Vec<(Option<ScopeKey>, Arc<BindingNames>)>;

/// Most agents whose binding names are kept for one generation.
const NAMES_ENTRIES: usize = 64;

impl Shared {
    pub(crate) fn new(runtime: &ToolRuntime, preset: Option<&ScopeKey>, code_runtime: Arc<dyn CodeRuntime>, logger: Option<LogSink>) -> Self {
        Self {
            runtime: runtime.downgrade(),
            preset: preset.cloned(),
            views: ViewCache::default(),
            live_runs: Mutex::new(HashSet::new()),
            retention: Retention::new(Arc::clone(&code_runtime)),
            code_runtime,
            logger,
            warned: AtomicBool::new(false),
            names: Mutex::new((0, Vec::new())),
        }
    }

    /// The names of `agent`'s `tools` namespace: every tool it sees but `code_run`, in presentation order.
    /// Made from the schemas once per registry generation and agent, and shared by the runs until the
    /// registry changes (so a run of the same catalogue reuses one names set: issue 39).
    pub(crate) fn binding_names(&self, runtime: &ToolRuntime, agent: Option<&ScopeKey>) -> Arc<BindingNames> {
        // Read before the schemas: a change meanwhile leaves them under a generation no later run asks for.
        let generation = runtime.registry_generation();
        {
            let cache = self.names.lock().unwrap_or_else(|p| p.into_inner());
            if cache.0 == generation
                && let Some((_, names)) = cache.1.iter().find(|(scope, _)| scope.as_ref() == agent)
            {
                return Arc::clone(names);
            }
        }
        let names: Vec<String> = runtime.schemas(agent).into_iter().filter(|s| s.name != CODE_RUN_NAME).map(|s| s.name).collect();
        let names = Arc::new(BindingNames::new(names));
        let mut cache = self.names.lock().unwrap_or_else(|p| p.into_inner());
        if cache.0 != generation {
            *cache = (generation, Vec::new());
        }
        if cache.1.len() >= NAMES_ENTRIES {
            cache.1.remove(0);
        }
        cache.1.push((agent.cloned(), Arc::clone(&names)));
        names
    }

    /// The catalog view of `definitions` (their classes cached, their schemas their own). A host mount
    /// warns here, once in the plugin's life (CDM-014).
    pub(crate) fn view(&self, runtime: &ToolRuntime, definitions: Vec<ToolSchema>) -> CatalogView {
        self.warn_host_mount();
        self.views.view(runtime, self.preset.as_ref(), definitions)
    }

    /// A host mount's warning, once in the plugin's life (CDM-014): wherever a view is or would be read.
    pub(crate) fn warn_host_mount(&self) {
        if self.preset.is_none() && !self.warned.swap(true, Ordering::SeqCst) {
            if let Some(logger) = &self.logger {
                logger(HOST_MOUNT_WARNING);
            }
        }
    }

    /// The view of what `agent` sees now.
    pub(crate) fn view_for(&self, runtime: &ToolRuntime, agent: Option<&ScopeKey>) -> CatalogView {
        self.view(runtime, runtime.schemas(agent))
    }

    /// A program call: its parent is a `code_run` execution of this plugin still running (the nested
    /// marker, registry-minted, which no model can forge) AND its id is a `:ptc:` sub-call id. CDM-025.
    pub(crate) fn is_program_call(&self, input: &ToolExecutionInput) -> bool {
        let marked = input.parent.is_some_and(|parent| self.lock_runs().contains(&parent));
        marked && input.call_id.contains(PTC_ID_MARKER)
    }

    /// Mark `token` as a running `code_run` until the returned guard drops.
    pub(crate) fn running(self: &Arc<Self>, token: ExecutionToken) -> RunningGuard {
        self.lock_runs().insert(token);
        RunningGuard { shared: Arc::clone(self), token }
    }

    fn lock_runs(&self) -> std::sync::MutexGuard<'_, HashSet<ExecutionToken>> {
        self.live_runs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running `code_run`: its token marks program calls until it drops.
pub(crate) struct RunningGuard {
    shared: Arc<Shared>,
    token: ExecutionToken,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        self.shared.lock_runs().remove(&self.token);
    }
}
