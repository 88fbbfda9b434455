//! [`ToolRuntime`]: the service facade (cheap to clone) over the registry, the hook lists and the pipeline,
//! the `run_code` transport and the prompt contribution. The top layer: it wires the layers below together
//! and hands each only its part (see ARCHITECTURE.md, Architecture Invariant: one-way layering).
//!
//! Spec: REG-001, REG-014..REG-016, REG-019, PIPE-001, PIPE-018, CODE-001..CODE-005, CODE-011, CODE-012, CDM-046,
//! CDM-001..CDM-007, CDM-047.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use crate::approval::ApprovalSeam;
use crate::callback::DropSafe;
use crate::code::bridge::TransportHost;
use crate::code::flavor::{FlavorError, resolve_flavor};
use crate::code::transport::CodeTransport;
use crate::code::{CodeDispatchLogListener, CodeDispatchObserver, CodeRuntime, DispatchLogHooks};
use crate::contribution::ToolsPromptLink;
use crate::definition::{ToolDefinition, ToolSchema};
use crate::error::{RegisterError, SchemasError, SchemasErrorKind};
use crate::executor::{ExecutorRoute, ExecutorTable, NativeExecutor, SetExecutorError, ToolExecutor, installation_guard};
use crate::execution::{ExecutionMode, ExecutionToken, ToolExecutionInput};
use crate::hooks::{
    ChangeObserver, FallibleGuardFn, GuardFn, HookGuard, LogSink, PostExecuteListener, PreExecuteListener, ResultObserver, SessionAppendObserver, SessionEntry, Slot,
};
use crate::pipeline::Pipeline;
use crate::pipeline::dispatch::ExecuteWrapper;
use crate::presentation::{ConfigError, DEFAULT_MAX_PARALLEL_SUB_CALLS, PresentAsError, resolve_max_parallel_sub_calls};
use crate::prompt::SystemPrompt;
use crate::registry::{Registration, Registry, RestrictError, ToolFilter, ResolvedTool};
use crate::result::ToolExecutionResult;
use crate::scope::{ScopeEffects, ScopeKey};
use crate::sdk::SdkToolSchema;

pub use crate::presentation::ToolMode;

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

    /// Add a `tools/pre-execute` listener (global, or observing one agent scope and its nested scopes).
    pub fn on_pre_execute(&self, scope: Option<&ScopeKey>, listener: Arc<dyn PreExecuteListener>) -> HookGuard {
        self.inner.pipeline.pre_execute.add(scope, listener)
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

    /// Add a monotonic guard (global, or applying to one agent scope).
    pub fn guard(&self, scope: Option<&ScopeKey>, guard: GuardFn) -> HookGuard {
        self.inner.pipeline.registry.add_guard(scope, guard)
    }

    /// Add a guard that may throw (global, or applying to one agent scope): an `Err` is the call's final
    /// result (PIPE-010), as when an upstream guard callback throws.
    pub fn guard_fallible(&self, scope: Option<&ScopeKey>, guard: FallibleGuardFn) -> HookGuard {
        self.inner.pipeline.registry.add_fallible_guard(scope, guard)
    }

    /// [`on_pre_execute`](Self::on_pre_execute) ahead of every listener already registered (the
    /// newest prepended listener runs first). PIPE-001, PIPE-002.
    pub fn prepend_pre_execute(&self, scope: Option<&ScopeKey>, listener: Arc<dyn PreExecuteListener>) -> HookGuard {
        self.inner.pipeline.pre_execute.add_first(scope, listener)
    }

    /// [`on_execute`](Self::on_execute) ahead of every wrapper already registered (the outermost wrapper).
    /// PIPE-001, PIPE-014.
    pub fn prepend_execute(&self, scope: Option<&ScopeKey>, wrapper: Arc<dyn ExecuteWrapper>) -> HookGuard {
        self.inner.pipeline.execute_wrappers.add_first(scope, wrapper)
    }

    /// [`on_post_execute`](Self::on_post_execute) ahead of every listener already registered. PIPE-001.
    pub fn prepend_post_execute(&self, scope: Option<&ScopeKey>, listener: Arc<dyn PostExecuteListener>) -> HookGuard {
        self.inner.pipeline.post_execute.add_first(scope, listener)
    }

    /// A `tools/result` observer ahead of every observer already registered (global with `None`, else
    /// for one agent scope and its nested scopes). PIPE-011, PIPE-012.
    pub fn prepend_result(&self, scope: Option<&ScopeKey>, observer: ResultObserver) -> HookGuard {
        self.inner.pipeline.observers.add_first(scope, observer)
    }

    /// Add a `tools/execute` around-wrapper (global, or for one agent scope and its nested scopes).
    pub fn on_execute(&self, scope: Option<&ScopeKey>, wrapper: Arc<dyn ExecuteWrapper>) -> HookGuard {
        self.inner.pipeline.execute_wrappers.add(scope, wrapper)
    }

    /// Add a `tools/post-execute` listener (global, or observing one agent scope and its nested scopes).
    pub fn on_post_execute(&self, scope: Option<&ScopeKey>, listener: Arc<dyn PostExecuteListener>) -> HookGuard {
        self.inner.pipeline.post_execute.add(scope, listener)
    }

    /// Mount the approval seam that services `ask` decisions (replacing any mounted one); dropping the
    /// guard unmounts it, after which `ask` degrades to deny again.
    pub fn mount_approval(&self, seam: Arc<dyn ApprovalSeam>) -> HookGuard {
        self.inner.pipeline.approval.mount(seam)
    }

    /// Mount the code runtime (`ctx.codeRuntime`) that Code Mode assembly and `run_code` read at use
    /// time, replacing any mounted one; dropping the guard unmounts it.
    pub fn mount_code_runtime(&self, runtime: Arc<dyn CodeRuntime>) -> HookGuard {
        self.inner.code_runtime.mount(runtime)
    }

    /// The code runtime mounted right now, if any.
    pub fn code_runtime(&self) -> Option<Arc<dyn CodeRuntime>> {
        self.inner.code_runtime.get()
    }

    /// Observe registry changes (`tools/change`): one call per successful registration and per effective
    /// disposal (guards emit none). An observer that panics — throws, in upstream's terms — stops that
    /// notification; when it announced a registration, [`register`](Self::register) fails with the panic's
    /// message ([`RegisterErrorKind::ChangeListener`](crate::RegisterErrorKind::ChangeListener)) and the
    /// tool is not registered (REG-022).
    pub fn on_change(&self, observer: ChangeObserver) -> HookGuard {
        self.inner.pipeline.registry.changes.add(None, observer)
    }

    /// [`on_change`](Self::on_change) ahead of every observer already registered. REG-019.
    pub fn prepend_change(&self, observer: ChangeObserver) -> HookGuard {
        self.inner.pipeline.registry.changes.add_first(None, observer)
    }

    /// Dispose everything registered for `scope` — its tools, guards and hooks — as disposing an agent's
    /// context does upstream. Outstanding handles for them become no-ops.
    pub fn dispose_scope(&self, scope: &ScopeKey) {
        self.inner.pipeline.pre_execute.remove_scope(scope);
        self.inner.pipeline.execute_wrappers.remove_scope(scope);
        self.inner.pipeline.post_execute.remove_scope(scope);
        self.inner.pipeline.observers.remove_scope(scope);
        self.inner.dispatch_log.listeners.remove_scope(scope);
        self.inner.pipeline.registry.dispose_scope(scope);
        self.inner.executors.remove_scope(scope);
        if let Some(link) = self.inner.prompt.get() {
            link.dispose_scope(scope);
        }
        self.inner.scope_effects.run(scope);
    }

    /// Run `effect` once when `scope` is disposed ([`dispose_scope`](Self::dispose_scope)), after its tools,
    /// hooks and executor are gone — upstream's effect on an agent context. Dropping the guard first
    /// cancels it. A plugin attaches per-agent cleanup here (dsh-codemode releases the agent's persistent
    /// code environment); the effect outlives the plugin unless the plugin drops the guard. On a scope
    /// already disposed the effect runs at once (nothing else ever would); see
    /// [`try_on_scope_dispose`](Self::try_on_scope_dispose) to tell the two apart.
    pub fn on_scope_dispose(&self, scope: &ScopeKey, effect: impl FnOnce() + Send + 'static) -> HookGuard {
        self.try_on_scope_dispose(scope, effect).unwrap_or_else(|effect| {
            effect();
            HookGuard::new(|| {})
        })
    }

    /// [`on_scope_dispose`](Self::on_scope_dispose), but `Err(effect)` (not run, not attached) when `scope`
    /// was already disposed: a call that arrives after its agent went away can then decline to create what
    /// the effect would release (dsh-codemode runs such a call without a kept environment, CDM-050). The
    /// check and the attachment are one step against [`dispose_scope`](Self::dispose_scope).
    pub fn try_on_scope_dispose<F: FnOnce() + Send + 'static>(&self, scope: &ScopeKey, effect: F) -> Result<HookGuard, Box<dyn FnOnce() + Send>> {
        let id = self.inner.scope_effects.add(scope, Box::new(effect))?;
        let effects = Arc::downgrade(&self.inner.scope_effects);
        Ok(HookGuard::new(move || {
            if let Some(effects) = effects.upgrade() {
                effects.cancel(id);
            }
        }))
    }

    /// A fresh agent scope (nested in `parent` when given) that this runtime knows
    /// ([`knows_scope`](Self::knows_scope)); otherwise the same as [`ScopeKey::new`] / [`ScopeKey::child`].
    /// Open a scope here when a plugin needs to check it was handed a real one (dsh-codemode refuses a
    /// preset scope its runtime does not know, CDM-050).
    pub fn open_scope(&self, name: impl Into<String>, parent: Option<&ScopeKey>) -> ScopeKey {
        ScopeKey::opened(name, parent, self.inner.id)
    }

    /// Whether `scope`, or a scope enclosing it, was opened by this runtime ([`open_scope`](Self::open_scope)).
    pub fn knows_scope(&self, scope: &ScopeKey) -> bool {
        scope.chain().any(|k| k.origin() == self.inner.id)
    }

    /// Observe every final result (all scopes).
    pub fn on_result(&self, observer: ResultObserver) -> HookGuard {
        self.inner.pipeline.observers.add(None, observer)
    }

    /// Receive the warnings the pipeline logs instead of failing a call (upstream's `ctx.logger.warn`):
    /// today a `tools/result` observer that panicked, as
    /// `tool "<name>" (<callId>): tools/result observer failed: <message>`. With no sink the lines are
    /// dropped. Dropping the guard removes the sink.
    pub fn on_log(&self, sink: LogSink) -> HookGuard {
        self.inner.pipeline.logs.add(None, sink)
    }

    /// Where a `tools/result` observer that finishes later (hands its work to a task) reports that
    /// work's failure, to be logged like an observer that panicked (PIPE-021).
    pub fn observer_failure_log(&self) -> crate::pipeline::result::ObserverFailureLog {
        crate::pipeline::result::ObserverFailureLog::new(self.inner.pipeline.logs.clone())
    }

    /// Observe final results of one agent scope (and its nested scopes) only.
    pub fn on_result_in(&self, scope: &ScopeKey, observer: ResultObserver) -> HookGuard {
        self.inner.pipeline.observers.add(Some(scope), observer)
    }

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

    /// Observe the `run_code` dispatch log (upstream's `tool/code-dispatch-start` and
    /// `tool/code-dispatch` session entries): one record when a program's sub-call starts, one when it
    /// committed, for transport calls that have an agent scope. Dropping the guard stops observing.
    pub fn on_code_dispatch(&self, observer: CodeDispatchObserver) -> HookGuard {
        self.inner.dispatch_log.observers.add(None, observer)
    }

    /// Add a `tools/code-dispatch-log` listener (global, or seeing only the dispatches of one agent scope
    /// and its nested scopes): a waterfall over the durable log copy of each settled `run_code`
    /// sub-dispatch, before its [`CodeDispatchEvent::Settled`](crate::code::CodeDispatchEvent) record is
    /// reported. The listener may return replacement content (say a spill preview plus a locator for an
    /// oversized result); `next.run()` keeps it. Only the logged copy changes: the program already has the
    /// value and the sub-call's `tools/result` is untouched. Whatever it returns is logged unvalidated;
    /// a failing listener is contained (the original content is logged, with a warning to
    /// [`on_log`](Self::on_log) sinks). Dropping the guard removes it. RUN-046..RUN-049.
    pub fn on_code_dispatch_log(&self, scope: Option<&ScopeKey>, listener: Arc<dyn CodeDispatchLogListener>) -> HookGuard {
        self.inner.dispatch_log.listeners.add(scope, listener)
    }

    /// Observe every entry this runtime appends to an agent's session log (upstream
    /// `exec.agent.session.append`): the `run_code` dispatch log's records, and whatever code built on the
    /// runtime appends with [`append_session_entry`](Self::append_session_entry). Dropping the guard
    /// removes it. RUN-058.
    pub fn on_session_append(&self, observer: SessionAppendObserver) -> HookGuard {
        self.inner.dispatch_log.session.observe(observer)
    }

    /// Append one entry to `agent`'s session log: every [`on_session_append`](Self::on_session_append)
    /// observer sees it (the reference keeps no session itself; the host's observer is the log). RUN-058.
    pub fn append_session_entry(&self, agent: &ScopeKey, entry_type: &str, data: serde_json::Value) {
        let entry = SessionEntry { agent: agent.clone(), entry_type: entry_type.to_owned(), data };
        self.inner.dispatch_log.session.append(&entry);
    }

    /// [`on_code_dispatch_log`](Self::on_code_dispatch_log) ahead of every listener already registered.
    pub fn prepend_code_dispatch_log(&self, scope: Option<&ScopeKey>, listener: Arc<dyn CodeDispatchLogListener>) -> HookGuard {
        self.inner.dispatch_log.listeners.add_first(scope, listener)
    }

    /// Attach the reason of a caller's cancellation to the execution `token` (upstream
    /// `AbortController.abort(reason)`; `CancellationToken` carries none): set it, then cancel the
    /// signal. A `run_code` execution relays it to its run, which fails with `code run failed (abort):
    /// <reason>`; without one the reason is [`crate::code::DEFAULT_ABORT_REASON`]. Forgotten when the
    /// execution publishes its result.
    pub fn set_abort_reason(&self, token: ExecutionToken, reason: impl Into<String>) {
        self.inner.pipeline.abort_reasons.set(token, reason.into());
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
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn prepended_hooks_run_first_and_a_throwing_guard_is_final() {
        use std::sync::Mutex;
        use crate::definition::{OutputDeclaration, Parameters};
        use crate::error::ToolFailure;
        let rt = ToolRuntime::new(ToolsConfig::default());
        let tool = ToolDefinition::new(
            "t",
            "d",
            Parameters::Raw(serde_json::json!({"type": "object"})),
            OutputDeclaration { schema: serde_json::json!({}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
            Arc::new(|_, _| Box::pin(async { Ok(serde_json::Value::Null) })),
        );
        let _t = rt.register(tool, None);
        let order = Arc::new(Mutex::new(Vec::new()));
        let observer = |label: &'static str| -> ResultObserver {
            let order = Arc::clone(&order);
            Arc::new(move |_, _| order.lock().unwrap_or_else(|p| p.into_inner()).push(label))
        };
        let _a = rt.on_result(observer("appended"));
        let _b = rt.prepend_result(None, observer("prepended"));
        let _g = rt.guard_fallible(None, Arc::new(|_| Err(ToolFailure::message("guard blew"))));
        let input = ToolExecutionInput::new("c", "t", serde_json::json!({}));
        let result = match tokio::runtime::Builder::new_current_thread().build() {
            Ok(runtime) => runtime.block_on(rt.execute(input)),
            Err(e) => panic!("runtime: {e}"),
        };
        assert_eq!(result.to_json()["error"]["message"], "guard blew");
        assert_eq!(*order.lock().unwrap_or_else(|p| p.into_inner()), ["prepended", "appended"]);
    }

    #[test]
    fn a_body_reads_the_reason_its_caller_attached() {
        use std::sync::Mutex;
        use crate::definition::{OutputDeclaration, Parameters};
        use crate::error::ToolFailure;
        use crate::execution::ExecutionToken;
        assert_eq!(crate::execution::DEFAULT_ABORT_REASON, crate::code::DEFAULT_ABORT_REASON);
        let rt = ToolRuntime::new(ToolsConfig::default());
        let seen: Arc<Mutex<Option<ExecutionToken>>> = Arc::default();
        let slot = Arc::clone(&seen);
        let tool = ToolDefinition::new(
            "t",
            "d",
            Parameters::Raw(serde_json::json!({"type": "object"})),
            OutputDeclaration { schema: serde_json::json!({}), render: Arc::new(|_, _| Ok(vec![])), presentation_meta: None },
            Arc::new(move |_, run| {
                let slot = Arc::clone(&slot);
                Box::pin(async move {
                    let before = run.abort_reason();
                    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(run.token());
                    run.signal().cancelled().await;
                    Err(ToolFailure::message(format!("{before:?} then {:?}", run.abort_reason())))
                })
            }),
        );
        let _t = rt.register(tool, None);
        let signal = tokio_util::sync::CancellationToken::new();
        let input = ToolExecutionInput::new("c", "t", serde_json::json!({})).with_signal(signal.clone());
        let abort = async {
            loop {
                let token = *seen.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(token) = token {
                    rt.set_abort_reason(token, "why");
                    signal.cancel();
                    return;
                }
                tokio::task::yield_now().await;
            }
        };
        let result = match tokio::runtime::Builder::new_current_thread().build() {
            Ok(runtime) => runtime.block_on(async { tokio::join!(rt.execute(input), abort).0 }),
            Err(e) => panic!("runtime: {e}"),
        };
        // A failure settling after the abort keeps its own error (PIPE-016).
        assert_eq!(result.to_json()["error"]["message"], "None then Some(\"why\")");
    }

    #[test]
    fn execute_future_is_send_and_runtime_is_shareable() {
        fn assert_sync<T: Send + Sync>() {}
        assert_sync::<ToolRuntime>();
        let rt = ToolRuntime::new(ToolsConfig::default());
        let future = rt.execute(ToolExecutionInput::new("c", "t", serde_json::Value::Null));
        assert_send(&future);
    }
}
