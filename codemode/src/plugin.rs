//! [`Codemode`]: the preset plugin applied to a runtime (seed 002's `apply()`): registers `code_run` and
//! the discovery tools in the preset scope, installs the [`CodemodeExecutor`] there, and clears the view
//! cache on every registry change. Dropping it (or [`Codemode::unload`]) releases the persistent code
//! environments its agents hold, uninstalls the executor, then unregisters its tools; another preset's
//! agents never see any of it.
//!
//! Spec: CDM-014, CDM-015, CDM-017, CDM-026, CDM-032, CDM-038, CDM-050 (a preset scope the runtime does not know is refused).

use std::fmt;
use std::sync::Arc;

use dsh_tools::code::CodeRuntime;
use dsh_tools::hooks::LogSink;
use dsh_tools::{HookGuard, Registration, ScopeKey, ToolRuntime};

use crate::executor::CodemodeExecutor;
use crate::shared::Shared;

/// How the plugin is configured.
#[derive(Clone)]
pub struct CodemodeConfig {
    /// The runtime `code_run` programs run on (its language picks the `code_run` flavor and the SDK; its
    /// [execution mode](dsh_tools::code::CodeExecutionMode) whether an agent's state survives between
    /// calls — `persistent-in-memory` keeps one environment per agent until the agent scope is disposed or
    /// the plugin unloads).
    pub code_runtime: Arc<dyn CodeRuntime>,
    /// Where the plugin's warnings go (the host-mount fallback, CDM-014); `None` drops them.
    pub logger: Option<LogSink>,
}

impl CodemodeConfig {
    /// Programs on `code_runtime`, warnings dropped.
    pub fn new(code_runtime: Arc<dyn CodeRuntime>) -> Self {
        Self { code_runtime, logger: None }
    }
}

impl fmt::Debug for CodemodeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodemodeConfig").field("language", &self.code_runtime.language()).finish_non_exhaustive()
    }
}

/// Why [`Codemode::apply`] failed; nothing stays registered or installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyError {
    /// What failed, naming the tool or the scope.
    pub message: String,
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dsh-codemode: {}", self.message)
    }
}

impl std::error::Error for ApplyError {}

/// The refusal of a preset scope the runtime does not know (CDM-050).
pub(crate) fn unknown_preset(preset: &ScopeKey) -> String {
    format!(
        "the preset scope `{}` is not one this runtime opened (ToolRuntime::open_scope), so no agent could be \
         under it; refusing to apply rather than leave every agent without the preset",
        preset.name()
    )
}

/// The plugin, applied. Holds its registrations and the executor installation; dropping it unloads.
pub struct Codemode {
    // Field order is drop order: the executor goes first, so no call is masked by a plugin half gone.
    _executor: HookGuard,
    _changes: HookGuard,
    _tools: Vec<Registration>,
    shared: Arc<Shared>,
}

impl fmt::Debug for Codemode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Codemode").field("preset", &self.shared.preset).finish_non_exhaustive()
    }
}

impl Codemode {
    /// Apply the plugin in `preset` (its scope label; `None`: mounted at the host layer, where only the
    /// name rule masks and one warning is logged, CDM-014). Registers `code_run` and the four discovery
    /// tools in `preset`, then installs the executor there. Fails when `preset` is a scope `runtime` does
    /// not know (open it with [`ToolRuntime::open_scope`]: a stray key would silently leave every agent
    /// without the preset, CDM-050), when a tool name is taken in that layer or the scope already has an
    /// executor.
    pub fn apply(runtime: &ToolRuntime, preset: Option<&ScopeKey>, config: CodemodeConfig) -> Result<Self, ApplyError> {
        if let Some(preset) = preset.filter(|p| !runtime.knows_scope(p)) {
            return Err(ApplyError { message: unknown_preset(preset) });
        }
        let shared = Arc::new(Shared::new(runtime, preset, config.code_runtime, config.logger));
        let mut definitions = vec![crate::transport::definition(&shared).map_err(|message| ApplyError { message })?];
        definitions.extend(crate::discovery::definitions(&shared));
        let mut tools = Vec::new();
        for definition in definitions {
            let name = definition.name.clone();
            let registration =
                runtime.register(definition, preset).map_err(|e| ApplyError { message: format!("registering `{name}`: {}", e.message) })?;
            tools.push(registration);
        }
        let cache = Arc::downgrade(&shared);
        let changes = runtime.on_change(Arc::new(move || {
            if let Some(shared) = cache.upgrade() {
                shared.views.clear();
            }
        }));
        let executor = runtime
            .set_executor(preset, Arc::new(CodemodeExecutor::new(Arc::clone(&shared))))
            .map_err(|e| ApplyError { message: e.message })?;
        Ok(Self { _executor: executor, _changes: changes, _tools: tools, shared })
    }

    /// The preset scope label the plugin was applied with.
    pub fn preset(&self) -> Option<&ScopeKey> {
        self.shared.preset.as_ref()
    }

    /// Unload: uninstall the executor, unregister the plugin's tools and release every persistent code
    /// environment its agents still hold (the same as dropping it).
    pub fn unload(self) {
        drop(self);
    }
}

impl Drop for Codemode {
    fn drop(&mut self) {
        // The plugin scope's teardown (seed 002): every environment its agents still hold goes now; the
        // executor and the tools go with the fields, after this.
        self.shared.retention.release_all();
    }
}
