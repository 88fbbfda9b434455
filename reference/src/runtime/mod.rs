//! [`ToolRuntime`]: the service facade (cheap to clone) over the registry, the hook lists and the pipeline,
//! the `run_code` transport and the prompt contribution. The top layer: it wires the layers below together
//! and hands each only its part (see ARCHITECTURE.md, Architecture Invariant: one-way layering).
//!
//! This file holds the state, construction, presentation and the registry's reads and writes; the rest of
//! the facade is split by concern: `hooks.rs` (guards, pipeline listeners, change observers, log sinks),
//! `scopes.rs` (scope disposal, scope effects, opened scopes), `code.rs` (the code runtime, the dispatch
//! log, the session log, abort reasons), `execute.rs` (execution and executors).
//!
//! Spec: REG-001, REG-014..REG-016, REG-019, REG-020, CODE-001..CODE-005, CODE-012, SCOPE-017, PROMPT-008,
//! PROMPT-012, PROMPT-015, REG-027.

use std::sync::{Arc, Weak};

use crate::code::bridge::TransportHost;
use crate::code::flavor::{FlavorError, resolve_flavor};
use crate::code::transport::CodeTransport;
use crate::code::{CodeRuntime, DispatchLogHooks};
use crate::contribution::ToolsPromptLink;
use crate::definition::{ToolDefinition, ToolSchema};
use crate::error::{RegisterError, SchemasError, SchemasErrorKind};
use crate::executor::ExecutorTable;
use crate::hooks::{HookGuard, Slot};
use crate::pipeline::Pipeline;
use crate::presentation::{ConfigError, DEFAULT_MAX_PARALLEL_SUB_CALLS, PresentAsError, resolve_max_parallel_sub_calls};
use crate::prompt::SystemPrompt;
use crate::registry::{Registration, Registry, RestrictError, ToolFilter, ResolvedTool};
use crate::scope::{ScopeEffects, ScopeKey};
use crate::sdk::SdkToolSchema;

pub use crate::presentation::ToolMode;

mod code;
mod execute;
mod hooks;
mod scopes;

/// Runtime configuration (upstream's `tools` config row).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ToolsConfig {
    /// Presentation of scopes that declare none with [`ToolRuntime::present_as`]. CODE-002.
    pub mode: ToolMode,
    /// The `run_code` overlap cap; absent = 10. Any JavaScript number can be expressed so that
    /// [`ToolRuntime::try_new`] rejects what upstream's constructor rejects (CODE-001).
    pub max_parallel_sub_calls: Option<f64>,
}

impl ToolsConfig {
    /// A configuration presenting in `mode`, with the default cap.
    pub fn with_mode(mode: ToolMode) -> Self {
        Self { mode, max_parallel_sub_calls: None }
    }

    /// Upstream's construction check: the resolved `run_code` overlap cap, or
    /// `maxParallelSubCalls must be a positive integer`. CODE-001.
    pub fn validate(&self) -> Result<u64, ConfigError> {
        resolve_max_parallel_sub_calls(self.max_parallel_sub_calls)
    }
}

/// The facade's state: the pipeline (registry and hook tables), what the `run_code` transport reads
/// besides it (shared with the transport's host), and the prompt link. Each layer below receives only its
/// own part.
struct Inner {
    pipeline: Arc<Pipeline>,
    /// `ctx.codeRuntime`: read at use time (assembly, `run_code` execution), never required up front.
    code_runtime: Arc<Slot<Arc<dyn CodeRuntime>>>,
    /// Observers of the `run_code` dispatch log and its `tools/code-dispatch-log` waterfall.
    dispatch_log: DispatchLogHooks,
    /// The resolved `run_code` overlap cap.
    max_parallel_sub_calls: u64,
    /// The system prompt this runtime contributes to, when built with one ([`ToolRuntime::try_with_prompt`]).
    prompt: std::sync::OnceLock<ToolsPromptLink>,
    /// The per-scope executors ([`ToolRuntime::set_executor`]); empty = the native executor everywhere.
    executors: Arc<ExecutorTable>,
    /// Effects attached to scopes ([`ToolRuntime::on_scope_dispose`]).
    scope_effects: Arc<ScopeEffects>,
    /// This runtime's number, marking the scopes it opened ([`ToolRuntime::open_scope`]); never 0.
    id: u64,
}

/// Numbers runtimes for [`ToolRuntime::open_scope`].
static RUNTIMES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The tool registry and execution pipeline.
#[derive(Clone)]
pub struct ToolRuntime {
    inner: Arc<Inner>,
}

/// A non-owning handle to a [`ToolRuntime`] ([`ToolRuntime::downgrade`]): what a plugin's tools and
/// executors keep, since the runtime owns them and a strong handle there would keep it alive forever.
#[derive(Clone)]
pub struct WeakToolRuntime {
    inner: Weak<Inner>,
}

impl WeakToolRuntime {
    /// The runtime, while it is alive.
    pub fn upgrade(&self) -> Option<ToolRuntime> {
        self.inner.upgrade().map(|inner| ToolRuntime { inner })
    }
}

impl std::fmt::Debug for WeakToolRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeakToolRuntime").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for ToolRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRuntime").finish_non_exhaustive()
    }
}

impl ToolRuntime {
    /// A runtime with no tools and no hooks. Infallible: an invalid `max_parallel_sub_calls` resolves to
    /// the default cap (10) here; use [`try_new`](Self::try_new) for upstream's construction check.
    pub fn new(config: ToolsConfig) -> Self {
        let cap = config.validate().unwrap_or(DEFAULT_MAX_PARALLEL_SUB_CALLS);
        Self::build(config.mode, cap)
    }

    /// A runtime with no tools and no hooks, rejecting an invalid configuration as upstream's
    /// constructor does (`maxParallelSubCalls must be a positive integer`). CODE-001.
    pub fn try_new(config: ToolsConfig) -> Result<Self, ConfigError> {
        let cap = config.validate()?;
        Ok(Self::build(config.mode, cap))
    }

    fn build(mode: ToolMode, max_parallel_sub_calls: u64) -> Self {
        let code_runtime = Slot::new();
        let dispatch_log = DispatchLogHooks::new();
        // The transport reaches the pipeline weakly: the registry holding it belongs to that pipeline.
        let pipeline = Arc::new_cyclic(|pipeline: &Weak<Pipeline>| {
            let host = TransportHost {
                pipeline: Weak::clone(pipeline),
                runtime: Arc::clone(&code_runtime),
                max_parallel_sub_calls,
                dispatch_log: dispatch_log.clone(),
                names: Default::default(),
            };
            let transport = CodeTransport::new(Arc::new(host), mode);
            Pipeline::new(Arc::new(Registry::new(mode).with_transport(Arc::new(transport))))
        });
        let inner = Inner {
            pipeline,
            code_runtime,
            dispatch_log,
            max_parallel_sub_calls,
            prompt: std::sync::OnceLock::new(),
            executors: Arc::new(ExecutorTable::default()),
            scope_effects: Arc::default(),
            id: RUNTIMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        Self { inner: Arc::new(inner) }
    }

    /// [`try_new`](Self::try_new), contributing to `prompt` as upstream's `ToolRuntime` does to the
    /// injected `systemPrompt`: the tool provider, and under a non-native config mode the `tools:code-only`
    /// and `tools:sdk` sections; [`present_as`](Self::present_as) then adds them per scope. A section name
    /// the prompt already holds globally rejects construction with the prompt's message. PROMPT-008,
    /// PROMPT-012, PROMPT-015.
    pub fn try_with_prompt(config: ToolsConfig, prompt: &SystemPrompt) -> Result<Self, ConfigError> {
        let runtime = Self::try_new(config.clone())?;
        let inner = &runtime.inner;
        let registry = Arc::downgrade(&inner.pipeline.registry);
        let executors = Arc::downgrade(&inner.executors);
        let link = ToolsPromptLink::attach(prompt, registry, Arc::downgrade(&inner.code_runtime), executors, config.mode)
            .map_err(|e| ConfigError { message: e.message })?;
        let _ = runtime.inner.prompt.set(link);
        Ok(runtime)
    }

    /// Withdraw everything this runtime contributed globally to its [`SystemPrompt`]
    /// ([`try_with_prompt`](Self::try_with_prompt)): the tool provider, so an assembly lists no tools
    /// (`run_code` included), and under a non-native config mode the `tools:code-only` and `tools:sdk`
    /// sections, as disposing upstream's `ToolRuntime` plugin does. Sections other plugins registered stay.
    /// Idempotent, and a no-op for a runtime built without a prompt. A later [`present_as`](Self::present_as)
    /// adds no sections; the sections of earlier declarations go with their guards (upstream disposes the
    /// plugins that depend on the service, so drop the runtime's registrations and guards too). Dropping
    /// the last handle of the runtime does the same. REG-027.
    pub fn detach_prompt(&self) {
        if let Some(link) = self.inner.prompt.get() {
            link.detach();
        }
    }

    /// A handle that does not keep the runtime alive.
    pub fn downgrade(&self) -> WeakToolRuntime {
        WeakToolRuntime { inner: Arc::downgrade(&self.inner) }
    }

    /// The resolved `run_code` overlap cap (`maxParallelSubCalls`). CODE-001.
    pub fn max_parallel_sub_calls(&self) -> u64 {
        self.inner.max_parallel_sub_calls
    }

    /// The presentation `scope`'s agent sees (upstream `modeFor`): the nearest [`present_as`] declaration
    /// on its scope chain, else the config `mode`; `None` (the global view) is the config `mode`. CODE-002.
    ///
    /// [`present_as`]: Self::present_as
    pub fn mode_for(&self, scope: Option<&ScopeKey>) -> ToolMode {
        self.inner.pipeline.registry.mode_for(scope)
    }

    /// Present `scope`'s tools in `mode` instead of the config default (upstream `presentAs`), for that
    /// scope and its nested scopes. `None` is upstream's plain context: rejected (CODE-003). A second
    /// declaration in the same scope is rejected whatever its mode (CODE-004). Dropping the guard — or
    /// disposing the scope — withdraws it (CODE-005). Declaring and withdrawing each emit `tools/change`
    /// (CODE-012).
    pub fn present_as(&self, scope: Option<&ScopeKey>, mode: ToolMode) -> Result<HookGuard, PresentAsError> {
        let declared = self.inner.pipeline.registry.present_as(scope, mode)?;
        match (self.inner.prompt.get(), scope) {
            (Some(link), Some(scope)) => link.present_as(scope, mode, declared),
            _ => Ok(declared),
        }
    }

    /// Register globally (`scope: None`) or for one agent scope, shadowing a same-named global there.
    /// Dropping the returned handle unregisters.
    pub fn register(&self, def: ToolDefinition, scope: Option<&ScopeKey>) -> Result<Registration, RegisterError> {
        let tool = def.name.clone();
        self.inner.pipeline.registry.register(def, scope).map_err(|e| e.for_tool(tool))
    }

    /// The schema `scope` resolves `name` to (shadowing applied).
    pub fn get(&self, name: &str, scope: Option<&ScopeKey>) -> Option<ToolSchema> {
        self.inner.pipeline.registry.resolve(name, scope).map(|t| t.schema.clone())
    }

    /// The definition `scope` resolves `name` to, as a UI reads it (upstream `get(name, scope)`, whose
    /// answer carries the whole definition): its output schema and its presenters `presentCall` /
    /// `presentResult` — pass the calling agent so the card matches what executed. `None` when nothing
    /// resolves; `run_code` resolves under `code` and `both` (its `presentCall` only). [`get`](Self::get)
    /// is the model-facing projection of the same resolution.
    pub fn resolve(&self, name: &str, scope: Option<&ScopeKey>) -> Option<ResolvedTool> {
        self.inner.pipeline.registry.resolve(name, scope).map(ResolvedTool::new)
    }

    /// Schemas of everything `scope` can see, in presentation order, projected as registered: a raw
    /// parameter schema holding `-0` is returned as is, where upstream's `schemas()` throws
    /// ([`try_schemas`](Self::try_schemas) makes that check, and the flavor check, and returns the error).
    pub fn schemas(&self, scope: Option<&ScopeKey>) -> Vec<ToolSchema> {
        self.inner.pipeline.registry.schemas(scope)
    }

    /// A number that changes before any change to the registry (a tool registered or dropped, a mask set
    /// or lifted): read it before [`schemas`](Self::schemas), and what they gave is still what they give
    /// while it stays the same. For a host's caches of what the visible tools imply (dsh-codemode keeps its
    /// binding names per generation, as `run_code` does).
    pub fn registry_generation(&self) -> u64 {
        self.inner.pipeline.registry.generation()
    }

    /// What the Code Mode SDK renderers consume for `scope`: every visible tool (presentation order) with
    /// its parameter and output schemas (upstream `sdkSchemas`). Copies are made without recursion.
    pub fn sdk_schemas(&self, scope: Option<&ScopeKey>) -> Vec<SdkToolSchema> {
        crate::contribution::sdk_schemas(&self.inner.pipeline.registry, scope)
    }

    /// Mask inherited tools for one agent scope (its own registrations stay visible); masks intersect.
    /// Dropping the guard lifts the mask. A plain-context (process-wide) restriction, which upstream
    /// rejects at run time, cannot be written: `scope` is not optional (SCOPE-017).
    ///
    /// ```compile_fail
    /// use dsh_tools::{ToolFilter, ToolRuntime, ToolsConfig};
    /// let rt = ToolRuntime::new(ToolsConfig::default());
    /// let _mask = rt.restrict(None, ToolFilter::default()); // no plain-context restrict
    /// ```
    pub fn restrict(&self, scope: &ScopeKey, filter: ToolFilter) -> Result<HookGuard, RestrictError> {
        self.inner.pipeline.registry.restrict(scope, filter)
    }

    /// [`schemas`](Self::schemas) with upstream's checks: the first visible tool (in presentation order)
    /// whose raw parameters are not lossless JSON fails the read with `tool "<name>" parameters must be
    /// lossless JSON before schema projection` (REG-020: registration, `get` and execution accept such
    /// parameters); then, under a non-native presentation, a mounted code runtime whose language has no
    /// `run_code` flavor fails it (`schemas` leaves `run_code` out then).
    pub fn try_schemas(&self, scope: Option<&ScopeKey>) -> Result<Vec<ToolSchema>, SchemasError> {
        let schemas = self.schemas(scope);
        if let Some(lossy) = schemas.iter().find(|schema| !crate::value::is_lossless(&schema.parameters)) {
            return Err(SchemasError {
                kind: SchemasErrorKind::NotLossless,
                message: format!("tool \"{}\" parameters must be lossless JSON before schema projection", lossy.name),
            });
        }
        if self.mode_for(scope) != ToolMode::Native {
            resolve_flavor(self.code_runtime().as_ref().map(|runtime| runtime.language()))
                .map_err(|e: FlavorError| SchemasError { kind: SchemasErrorKind::Flavor, message: e.message })?;
        }
        Ok(schemas)
    }
}

#[cfg(test)]
mod tests;
