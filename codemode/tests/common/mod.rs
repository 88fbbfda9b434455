//! The seed's layer layout (research note § 3.0) for the integration tests: global tools (`g_echo`, the
//! fake MCP server's three `mcp__fake__*`, `shadow`), the codemode preset `P` (`read`, `p_echo`,
//! `mcp__local__y`, its own `shadow`, the plugin), the agent `A` under `P` (`a_echo`), a standard preset
//! `S` with agent `S1` (`s_echo`), and hook counters recording every name each pipeline stage saw.

#![allow(dead_code, clippy::unwrap_used)] // shared by several test files; tests fail loudly

use std::sync::{Arc, Mutex};

use dsh_codemode::{Codemode, CodemodeConfig};
use dsh_tools::code::CodeRuntime;
use dsh_tools::code::CodeRuntimeLimits;
use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::{
    OutputDeclaration, Parameters, PromptConfig, Registration, ScopeKey, SystemPrompt, ToolDefinition, ToolExecutionInput,
    ToolExecutionResult, ToolRuntime, ToolsConfig, execute_wrapper_fn, guard_fn, post_execute_fn, pre_execute_fn,
};
use serde_json::{Value, json};

pub const GLOBAL: [&str; 5] = ["g_echo", "mcp__fake__ticker", "mcp__fake__a", "mcp__fake__b", "shadow"];
pub const PRESET: [&str; 4] = ["read", "p_echo", "mcp__local__y", "shadow"];

pub struct World {
    pub prompt: SystemPrompt,
    pub runtime: ToolRuntime,
    pub preset: ScopeKey,
    pub agent: ScopeKey,
    pub standard: ScopeKey,
    pub standard_agent: ScopeKey,
    pub plugin: Option<Codemode>,
    pub tools: Vec<Registration>,
    /// `<stage>:<tool>` per stage entered, in order.
    pub seen: Arc<Mutex<Vec<String>>>,
    /// `<tool>` per body run.
    pub bodies: Arc<Mutex<Vec<String>>>,
    pub warnings: Arc<Mutex<Vec<String>>>,
}

/// A tool returning `"<layer>:<name>"`, recording its body runs; DSL parameters `{}` (an object).
pub fn tool(name: &str, layer: &str, bodies: &Arc<Mutex<Vec<String>>>) -> ToolDefinition {
    let value = format!("{layer}:{name}");
    let bodies = Arc::clone(bodies);
    let recorded = name.to_owned();
    let mut def = ToolDefinition::new(
        name,
        format!("{layer} tool {name}"),
        Parameters::Dsl(json!({})),
        OutputDeclaration {
            schema: json!({ "type": "json" }),
            render: Arc::new(|_, value: &Value| Ok(vec![json!({ "type": "text", "text": value.to_string() })])),
            presentation_meta: None,
        },
        Arc::new(move |_, _| {
            bodies.lock().unwrap().push(recorded.clone());
            let value = Value::String(value.clone());
            Box::pin(async move { Ok(value) })
        }),
    );
    if name == "mcp__fake__ticker" {
        def.description = "fake MCP: the latest ticker price".into();
    }
    def
}

pub fn typescript() -> Arc<dyn CodeRuntime> {
    Arc::new(TypeScriptRuntime::new(CodeRuntimeLimits::default()).unwrap())
}

impl World {
    /// The layout with the plugin applied in `P` on `code`.
    pub fn new(code: Arc<dyn CodeRuntime>) -> Self {
        let mut world = Self::bare();
        world.apply(code, true);
        world
    }

    /// The layout without the plugin.
    pub fn bare() -> Self {
        let prompt = SystemPrompt::new(PromptConfig::default()).unwrap();
        let runtime = ToolRuntime::try_with_prompt(ToolsConfig::default(), &prompt).unwrap();
        let preset = runtime.open_scope("P", None);
        let agent = ScopeKey::child("A", &preset);
        let standard = runtime.open_scope("S", None);
        let standard_agent = ScopeKey::child("S1", &standard);
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let mut tools = Vec::new();
        for name in GLOBAL {
            tools.push(runtime.register(tool(name, "G", &bodies), None).unwrap());
        }
        for name in PRESET {
            tools.push(runtime.register(tool(name, "P", &bodies), Some(&preset)).unwrap());
        }
        tools.push(runtime.register(tool("a_echo", "A", &bodies), Some(&agent)).unwrap());
        tools.push(runtime.register(tool("s_echo", "S", &bodies), Some(&standard)).unwrap());
        let world = Self {
            prompt,
            runtime,
            preset,
            agent,
            standard,
            standard_agent,
            plugin: None,
            tools,
            seen: Arc::new(Mutex::new(Vec::new())),
            bodies,
            warnings: Arc::new(Mutex::new(Vec::new())),
        };
        world.count_hooks();
        world
    }

    /// Apply the plugin in `P` (`in_preset`) or at the host layer.
    pub fn apply(&mut self, code: Arc<dyn CodeRuntime>, in_preset: bool) {
        let warnings = Arc::clone(&self.warnings);
        let mut config = CodemodeConfig::new(code);
        config.logger = Some(Arc::new(move |line: &str| warnings.lock().unwrap().push(line.to_owned())));
        let scope = in_preset.then_some(&self.preset);
        self.plugin = Some(Codemode::apply(&self.runtime, scope, config).unwrap());
    }

    fn count_hooks(&self) {
        let record = |stage: &'static str| {
            let seen = Arc::clone(&self.seen);
            move |name: &str| seen.lock().unwrap().push(format!("{stage}:{name}"))
        };
        let pre = record("pre");
        self.runtime.on_pre_execute(None, pre_execute_fn(move |exec, next| {
            pre(&exec.name);
            next.run()
        })).forget();
        let guard = record("guard");
        self.runtime.guard(None, guard_fn(move |exec| {
            guard(&exec.name);
            None
        })).forget();
        let around = record("around");
        self.runtime.on_execute(None, execute_wrapper_fn(move |dexec, next| {
            around(&dexec.execution().name);
            next.run()
        })).forget();
        let post = record("post");
        self.runtime.on_post_execute(None, post_execute_fn(move |exec, result, next| {
            let _ = result;
            post(&exec.name);
            next.run()
        })).forget();
    }

    /// The model-visible tool names assembled for `scope`.
    pub fn surface(&self, scope: &ScopeKey) -> Vec<String> {
        self.prompt.assemble(Some(scope)).unwrap().tools.into_iter().map(|t| t.name).collect()
    }

    /// A model-direct call by `scope` (provider-style id, fresh unmarked signal).
    pub async fn direct(&self, scope: &ScopeKey, name: &str, arguments: Value) -> ToolExecutionResult {
        let input = ToolExecutionInput::new(format!("call_{name}"), name, arguments).with_agent(scope);
        self.runtime.execute(input).await
    }

    /// One `code_run` by agent `A`.
    pub async fn code_run(&self, code: &str) -> ToolExecutionResult {
        self.direct(&self.agent, "code_run", json!({ "code": code, "description": "test program" })).await
    }

    pub fn take_seen(&self) -> Vec<String> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }

    pub fn take_bodies(&self) -> Vec<String> {
        std::mem::take(&mut *self.bodies.lock().unwrap())
    }
}
