//! The `dsh-tools` side of a session: builds the `ToolRuntime` from `setup` (agents, then tools, then
//! hooks, in order), installs the subject's own observers, and holds what the session registered; the
//! registry requests it serves are in `requests.rs`, the listener fixtures in `listeners.rs`.
//!
//! Every hook kind is mounted (`prepend: true` through the runtime's `prepend_*` registrations), the
//! approval seam when `setup.approval` is present, agent masks (`scope/restrict`) and presentations
//! (`scope/presentAs`), and the system prompt the runtime contributes to (`prompt.rs`). What the reference
//! lacks is rejected with a JSON-RPC error naming it (`rpc::UNSUPPORTED`), and the matching feature is not
//! advertised (`capabilities.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use dsh_conformance::fixture::{Mode, Setup, ToolFixture};
use dsh_tools::{
    ErrorCode, HookGuard, Registration, RegisterErrorKind, ScopeKey, ToolExecutionInput, ToolMode, ToolRuntime,
    ToolsConfig, pre_execute_fn,
};
use serde_json::Value;

mod codemode;
mod listeners;
mod requests;

use super::deep;
use super::fixtures::approval::FixtureApproval;
use super::fixtures::tool;
use super::result;
use super::rpc::{self, Failure, INVALID_STATE, Params, SETUP_REJECTED};
use super::shared::{CallTask, Shared};

/// Something that keeps a registration alive; dropping it disposes it.
enum Guard {
    Tool(Registration),
    Hook(HookGuard),
    Plugin(Box<dsh_codemode::Codemode>),
}

/// A guard and the agent it was registered through.
struct Held {
    /// When it was held (set by `hold`): a fiber's registrations are disposed newest first.
    seq: u64,
    agent: Option<String>,
    /// The fixture plugin it was registered through (`disposePlugin` drops it).
    plugin: Option<String>,
    _guard: Guard,
}

/// What a fiber's disposal takes, in the order cordis disposes a fiber's effects: the newest first, so a
/// `tools/change` listener of an agent does not hear the removal of the agent's tools registered before
/// it, and hears those registered after it (REG-029).
fn newest_first(mut held: Vec<Held>) -> Vec<Held> {
    held.sort_by(|a, b| b.seq.cmp(&a.seq));
    held
}

impl Held {
    /// Dispose now; `Err` is what a tool's removal announcement threw (REG-025).
    fn dispose(self) -> Result<(), String> {
        match self._guard {
            Guard::Tool(registration) => registration.try_dispose(),
            Guard::Hook(hook) => {
                hook.dispose();
                Ok(())
            }
            Guard::Plugin(plugin) => {
                drop(plugin);
                Ok(())
            }
        }
    }
}

/// What a registration threw: a JsonSchemaError also carries its code and violations (SCHEMA-026).
struct Threw {
    message: String,
    name: &'static str,
    code: Option<String>,
    violations: Option<Vec<String>>,
}

struct Agent {
    key: ScopeKey,
    open: bool,
}

#[derive(Default)]
struct State {
    agents: HashMap<String, Agent>,
    /// By handle (`as`, the fixture handle, or the listener id).
    handles: HashMap<String, Held>,
    /// Registrations whose handle was reused: still registered, no longer addressable (as upstream, where
    /// the adapter's handle map loses the disposer but the registration stays).
    orphans: Vec<Held>,
    /// The subject's own observers.
    own: Vec<HookGuard>,
    /// The `seq` of the last registration held.
    next_seq: u64,
    /// Handles disposed already: disposing one again calls the same (now no-op) disposer again.
    disposed: std::collections::HashSet<String>,
    /// The fixture plugins: every `plugin` a tool or listener fixture of the setup names (started at
    /// `session/open`, as upstream's adapter starts their fibers).
    plugins: std::collections::HashSet<String>,
    /// Fixture plugins disposed already (a plugin's fiber does not restart).
    disposed_plugins: std::collections::HashSet<String>,
    /// The code runtime the dsh-codemode plugin runs on (`codemode/environments`).
    codemode_runtime: Option<Arc<dyn dsh_tools::code::CodeRuntime>>,
    /// The setup's prompt sections and assemble listeners (`setup.prompt`), registered through the fixture
    /// plugin upstream: they go with the registry.
    prompt_contributions: Vec<HookGuard>,
    /// The mounted approval seam (`setup.approval`); `approval/unmount` drops it (APPR-010).
    approval: Option<HookGuard>,
    /// `registry/dispose` was served: the registry requests are refused from then on (REG-027).
    registry_disposed: bool,
}

/// The runtime of one session.
pub struct Engine {
    shared: Arc<Shared>,
    runtime: ToolRuntime,
    /// The system prompt the runtime contributes to (`prompt/assemble`).
    prompt: dsh_tools::SystemPrompt,
    fixtures: HashMap<String, ToolFixture>,
    state: Mutex<State>,
}

impl Engine {
    /// Builds the runtime and registers the setup's agents, prompt sections and assemble listeners, tools
    /// and hooks, in that order.
    pub fn open(shared: Arc<Shared>, setup: &Value) -> Result<Engine, Failure> {
        let setup: Setup = match setup {
            Value::Null => Setup::default(),
            v => rpc::parse_value(v, "setup")?,
        };
        let mut fixtures = HashMap::new();
        for fixture in setup.tools.iter().flatten() {
            // Check the whole vocabulary before anything is mounted.
            tool::definition(fixture, &shared)?;
            if fixtures.insert(fixture.handle().to_owned(), fixture.clone()).is_some() {
                return Err(Failure::params(format!("setup: duplicate tool handle {:?}", fixture.handle())));
            }
        }
        let approval = setup.approval.as_ref().map(|a| FixtureApproval::new(a, &shared)).transpose()?;
        let prompt = super::prompt::system_prompt(&setup)?;
        let runtime = ToolRuntime::try_with_prompt(tools_config(&setup), &prompt)
            .map_err(|e| Failure::new(SETUP_REJECTED, format!("setup: the tools config was rejected: {}", e.message)))?;
        let engine = Engine { runtime, prompt, shared, fixtures, state: Mutex::default() };
        engine.install_own_observers();
        let listeners = setup.hooks.as_ref().map(dsh_conformance::features::hook_listeners).unwrap_or_default();
        let tool_plugins = setup.tools.iter().flatten().filter_map(|t| t.plugin.clone());
        let hook_plugins = listeners.iter().filter_map(|l| l.common().plugin.map(str::to_owned));
        engine.state().plugins = tool_plugins.chain(hook_plugins).collect();
        if setup.logs == Some(true) {
            let shared = engine.shared.clone();
            let sink = engine.runtime.on_log(Arc::new(move |line| {
                shared.emit(deep::object([("type", "log".into()), ("level", "warn".into()), ("message", line.into())]));
            }));
            engine.state().own.push(sink);
        }
        if setup.session_log == Some(true) {
            let observer = super::code::observe_session_log(&engine.runtime, engine.shared.clone());
            engine.state().own.push(observer);
        }
        if let Some(mounted) = super::code::mount(&engine.runtime, setup.runtime, setup.runtime_limits.as_ref())? {
            engine.state().own.push(mounted);
        }
        if let Some(seam) = approval {
            let mounted = engine.runtime.mount_approval(Arc::new(seam));
            engine.state().approval = Some(mounted);
        }
        for agent in setup.agents.iter().flatten() {
            engine.open_agent(agent.name(), agent.parent())?;
        }
        if let Some(prompt) = &setup.prompt {
            let guards = super::prompt::contribute(&engine.prompt, prompt, |agent| engine.registering_scope(agent))?;
            engine.state().prompt_contributions.extend(guards);
        }
        engine.apply_codemode(&setup)?;
        for fixture in setup.tools.iter().flatten().filter(|f| f.registers_at_open()) {
            if let Err(e) = engine.register(fixture.handle(), None)? {
                return Err(Failure::new(
                    SETUP_REJECTED,
                    format!("setup: registering tool {:?} threw: {}", fixture.name, e.message),
                ));
            }
        }
        if let Some(hooks) = &setup.hooks {
            engine.add_setup_hooks(hooks)?;
        }
        Ok(engine)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Token capture for `parent` (first, so it sees every call that reaches policy) and the
    /// `{type: result}` event of every published result.
    fn install_own_observers(&self) {
        let shared = self.shared.clone();
        // Prepended, as upstream's adapter does (`{ prepend: true }`): a later prepended listener runs
        // ahead of it.
        let capture = self.runtime.prepend_pre_execute(
            None,
            pre_execute_fn(move |exec, next| {
                shared.note_token(&exec.call_id, exec.token);
                next.run()
            }),
        );
        let shared = self.shared.clone();
        let publish = self.runtime.on_result(Arc::new(move |exec, result| {
            shared.note_token(&exec.call_id, exec.token);
            shared.emit(deep::object([
                ("type", "result".into()),
                ("callId", exec.call_id.clone().into()),
                ("result", result::to_json(result)),
            ]));
        }));
        let dispatch_log = super::code::observe_dispatch_log(&self.runtime, self.shared.clone());
        self.state().own.extend([capture, publish, dispatch_log]);
    }

    /// The scope key of an agent named in a request (a dropped agent's key still answers lookups).
    fn agent_key(&self, agent: Option<&str>) -> Result<Option<ScopeKey>, Failure> {
        let Some(name) = agent else { return Ok(None) };
        let state = self.state();
        let agent = state.agents.get(name).ok_or_else(|| Failure::unknown("agent", name))?;
        Ok(Some(agent.key.clone()))
    }

    /// The scope a registration goes through: the agent must be open.
    fn registering_scope(&self, agent: Option<&str>) -> Result<Option<ScopeKey>, Failure> {
        let Some(name) = agent else { return Ok(None) };
        let state = self.state();
        let agent = state.agents.get(name).ok_or_else(|| Failure::unknown("agent", name))?;
        if !agent.open {
            return Err(Failure::new(INVALID_STATE, format!("agent {name:?} has been dropped")));
        }
        Ok(Some(agent.key.clone()))
    }

    fn open_agent(&self, name: &str, parent: Option<&str>) -> Result<(), Failure> {
        let mut state = self.state();
        if state.agents.get(name).is_some_and(|a| a.open) {
            return Err(Failure::new(INVALID_STATE, format!("agent {name:?} is already open")));
        }
        // A dropped parent still names its scope key (upstream's scope identity outlives its disposal).
        // Opened through the runtime, so a plugin can check it was handed a real scope (CDM-050).
        let parent = match parent {
            None => None,
            Some(p) => Some(state.agents.get(p).ok_or_else(|| Failure::unknown("agent", p))?.key.clone()),
        };
        let key = self.runtime.open_scope(name, parent.as_ref());
        state.agents.insert(name.to_owned(), Agent { key, open: true });
        Ok(())
    }

    /// Drops an agent scope with everything registered through it.
    fn drop_agent(&self, name: &str) -> Result<(), Failure> {
        let (dropped, key) = {
            let mut state = self.state();
            let agent = state.agents.get_mut(name).ok_or_else(|| Failure::unknown("agent", name))?;
            if !agent.open {
                return Err(Failure::new(INVALID_STATE, format!("agent {name:?} is already dropped")));
            }
            agent.open = false;
            let key = agent.key.clone();
            let mine = |h: &Held| h.agent.as_deref() == Some(name);
            let keys: Vec<String> = state.handles.iter().filter(|(_, h)| mine(h)).map(|(k, _)| k.clone()).collect();
            let mut dropped: Vec<Held> = keys.iter().filter_map(|k| state.handles.remove(k)).collect();
            // A handle stays valid (PROTOCOL.md `handle/dispose`): disposing one the drop took is a no-op.
            state.disposed.extend(keys);
            let (gone, kept): (Vec<Held>, Vec<Held>) = std::mem::take(&mut state.orphans).into_iter().partition(mine);
            state.orphans = kept;
            dropped.extend(gone);
            (newest_first(dropped), key)
        };
        drop(dropped);
        // Whatever the scope still holds that no handle tracks (nothing, today) goes too, as disposing an
        // agent's context does upstream.
        self.runtime.dispose_scope(&key);
        Ok(())
    }

    /// Disposes a fixture plugin: every registration made through it — tools and listeners — goes, newest
    /// first, as disposing a plain plugin fiber does upstream (one `tools/change` per tool; REG-014,
    /// PIPE-024). The Rust API has no fibers: a plugin's
    /// registrations are its `Registration` handles, dropped together.
    fn dispose_plugin(&self, name: &str) -> Result<(), Failure> {
        let dropped = {
            let mut state = self.state();
            if !state.plugins.contains(name) {
                return Err(Failure::unknown("plugin", name));
            }
            if !state.disposed_plugins.insert(name.to_owned()) {
                return Err(Failure::new(INVALID_STATE, format!("plugin {name:?} is already disposed")));
            }
            let mine = |h: &Held| h.plugin.as_deref() == Some(name);
            let keys: Vec<String> = state.handles.iter().filter(|(_, h)| mine(h)).map(|(k, _)| k.clone()).collect();
            for key in &keys {
                state.disposed.insert(key.clone());
            }
            let mut dropped: Vec<Held> = keys.iter().filter_map(|k| state.handles.remove(k)).collect();
            let (gone, kept): (Vec<Held>, Vec<Held>) = std::mem::take(&mut state.orphans).into_iter().partition(mine);
            state.orphans = kept;
            dropped.extend(gone);
            newest_first(dropped)
        };
        drop(dropped);
        Ok(())
    }

    fn hold(&self, handle: String, mut held: Held) {
        let mut state = self.state();
        state.next_seq += 1;
        held.seq = state.next_seq;
        state.disposed.remove(&handle);
        if let Some(previous) = state.handles.insert(handle, held) {
            state.orphans.push(previous);
        }
    }

    /// Registers the fixture `handle`: the outer error is the adapter's, the inner one what registration
    /// threw (`message`, `name`).
    fn register(&self, handle: &str, alias: Option<&str>) -> Result<Result<(), Threw>, Failure> {
        let fixture = self.fixtures.get(handle).ok_or_else(|| Failure::unknown("tool fixture", handle))?;
        if let Some(plugin) = &fixture.plugin {
            if fixture.agent.is_some() {
                return Err(Failure::params(format!("tool fixture {handle:?}: `plugin` and `agent` exclude each other")));
            }
            self.plugin_alive(plugin)?;
        }
        let scope = self.registering_scope(fixture.agent.as_deref())?;
        let definition = tool::definition(fixture, &self.shared)?;
        if let Some(r) = tool::define_tool_rejection(fixture) {
            let code = r.violations.as_ref().map(|_| ErrorCode::UNSUPPORTED_SCHEMA.as_str().to_owned());
            return Ok(Err(Threw { message: r.message, name: r.name, code, violations: r.violations }));
        }
        match self.runtime.register(definition, scope.as_ref()) {
            Ok(registration) => {
                let held = Held { seq: 0, agent: fixture.agent.clone(), plugin: fixture.plugin.clone(), _guard: Guard::Tool(registration) };
                self.hold(alias.unwrap_or(handle).to_owned(), held);
                Ok(Ok(()))
            }
            Err(e) => {
                let code = e.code().map(|c| c.as_str().to_owned());
                let violations = match &e.kind {
                    RegisterErrorKind::UnsupportedSchema(schema) => Some(schema.violations.clone()),
                    _ => None,
                };
                Ok(Err(Threw { message: e.message, name: e.name, code, violations }))
            }
        }
    }

    /// Starts a call: records it and returns the task that executes it and publishes its result.
    pub fn start_call(&self, params: Params<'_>) -> Result<CallTask, Failure> {
        self.require_registry("call/start")?;
        let call_id = params.str("callId")?.to_owned();
        let name = params.str("name")?.to_owned();
        let agent = self.agent_key(params.opt_str("agent")?)?;
        let parent = match params.opt_str("parent")? {
            None => None,
            Some(parent) => Some(self.shared.token(parent).ok_or_else(|| {
                Failure::new(
                    INVALID_STATE,
                    format!("parent {parent:?} has no execution token (not started, or not yet in the pipeline)"),
                )
            })?),
        };
        let aborted = params.flag("aborted")?;
        let arguments = params.get("arguments").map(deep::clone).unwrap_or(Value::Null);
        let signal = self.shared.calls.start(&call_id, aborted)?;
        let root_call_id = params.opt_str("rootCallId")?.map(str::to_owned);
        let input = ToolExecutionInput { call_id: call_id.clone(), name, arguments, signal, agent, parent, root_call_id };
        let (runtime, shared) = (self.runtime.clone(), self.shared.clone());
        Ok(Box::pin(async move {
            let outcome = runtime.execute(input).await;
            shared.calls.finish(&call_id, result::into_json(outcome));
        }))
    }

    /// Attach `call/abort`'s reason to the call's execution before its signal is cancelled.
    pub fn note_abort_reason(&self, call_id: &str, reason: &Value) {
        if let Some(token) = self.shared.token(call_id) {
            self.runtime.set_abort_reason(token, dsh_tools::value::js_string(reason));
        }
    }

    /// Disposes everything the session registered.
    pub fn close(&self) {
        let state = std::mem::take(&mut *self.state());
        drop(state);
    }
}

/// The `tools` config the setup asks for (`mode`, `maxParallelSubCalls`).
fn tools_config(setup: &Setup) -> ToolsConfig {
    let mode = match setup.mode {
        None | Some(Mode::Native) => ToolMode::Native,
        Some(Mode::Code) => ToolMode::Code,
        Some(Mode::Both) => ToolMode::Both,
    };
    // Exact for every cap a scenario can write: the config check rejects anything not a positive integer.
    #[allow(clippy::cast_precision_loss)]
    let max_parallel_sub_calls = setup.max_parallel_sub_calls.map(|n| n as f64);
    let mut config = ToolsConfig::with_mode(mode);
    config.max_parallel_sub_calls = max_parallel_sub_calls;
    config
}
