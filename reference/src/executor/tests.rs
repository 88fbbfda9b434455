//! Unit tests of the executor seam through the facade: request surface, one executor per scope, nearest
//! scope wins, guards, sections registered on the executor's behalf, execution and delegation.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::*;
use crate::definition::{OutputDeclaration, Parameters, ToolDefinition};
use crate::prompt::{PromptConfig, SectionText, SystemPrompt};
use crate::runtime::{ToolRuntime, ToolsConfig};

fn tool(name: &str) -> ToolDefinition {
    let output = OutputDeclaration {
        schema: json!({}),
        render: Arc::new(|_, value: &Value| Ok(vec![json!({"type": "text", "text": value.to_string()})])),
        presentation_meta: None,
    };
    let body_name = name.to_owned();
    ToolDefinition::new(
        name,
        "d",
        Parameters::Raw(json!({"type": "object"})),
        output,
        Arc::new(move |_, _| {
            let name = body_name.clone();
            Box::pin(async move { Ok(Value::String(format!("ran {name}"))) })
        }),
    )
}

/// Hides the names it was given; answers calls to `blocked` itself; delegates the rest.
struct Hiding {
    hidden: Vec<&'static str>,
    label: &'static str,
    seen: Arc<Mutex<Vec<String>>>,
}

impl ToolExecutor for Hiding {
    fn describe(&self, definitions: Vec<ToolSchema>) -> Vec<ToolSchema> {
        definitions.into_iter().filter(|d| !self.hidden.contains(&d.name.as_str())).collect()
    }

    fn sections(&self) -> Vec<PromptSection> {
        vec![PromptSection { name: "tools:sdk".into(), order: 150.0, text: SectionText::Static(self.label.into()) }]
    }

    fn execute(&self, input: ToolExecutionInput, native: NativeExecutor) -> BoxFuture<'static, ToolExecutionResult> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).push(format!("{}:{}", self.label, input.name));
        if input.name == "blocked" {
            return Box::pin(async { ToolExecutionResult::denial("blocked by executor".into()) });
        }
        native.execute(input)
    }
}

fn hiding(label: &'static str, hidden: Vec<&'static str>) -> (Arc<dyn ToolExecutor>, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    (Arc::new(Hiding { hidden, label, seen: Arc::clone(&seen) }), seen)
}

fn with_prompt() -> (ToolRuntime, SystemPrompt) {
    let prompt = SystemPrompt::new(PromptConfig::default()).expect("prompt");
    let runtime = ToolRuntime::try_with_prompt(ToolsConfig::default(), &prompt).expect("runtime");
    (runtime, prompt)
}

fn names(schemas: &[ToolSchema]) -> Vec<String> {
    schemas.iter().map(|s| s.name.clone()).collect()
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio").block_on(future)
}

#[test]
fn describe_is_the_request_surface() {
    let (runtime, prompt) = with_prompt();
    let preset = ScopeKey::new("preset");
    let agent = ScopeKey::child("agent", &preset);
    let _g = runtime.register(tool("g_echo"), None).expect("register");
    let _p = runtime.register(tool("p_echo"), Some(&preset)).expect("register");
    let (executor, _) = hiding("codemode", vec!["g_echo"]);
    let _e = runtime.set_executor(Some(&preset), executor).expect("install");
    let assembly = prompt.assemble(Some(&agent)).expect("assemble");
    assert_eq!(names(&assembly.tools), ["p_echo"]);
    assert_eq!(names(&runtime.request_schemas(Some(&agent))), ["p_echo"]);
    // The registry is untouched: the agent still resolves the hidden tool.
    assert!(runtime.get("g_echo", Some(&agent)).is_some());
}

#[test]
fn without_an_executor_the_native_path_is_taken() {
    let (runtime, prompt) = with_prompt();
    let _g = runtime.register(tool("g_echo"), None).expect("register");
    assert_eq!(names(&prompt.assemble(None).expect("assemble").tools), ["g_echo"]);
    assert_eq!(names(&runtime.request_schemas(None)), ["g_echo"]);
    let result = block_on(runtime.execute(ToolExecutionInput::new("c1", "g_echo", json!({}))));
    assert_eq!(result.text(), "\"ran g_echo\"");
}

#[test]
fn a_second_executor_in_one_scope_is_rejected() {
    let (runtime, _prompt) = with_prompt();
    let preset = ScopeKey::new("preset");
    let (first, seen) = hiding("first", vec![]);
    let _e = runtime.set_executor(Some(&preset), first).expect("install");
    let (second, _) = hiding("second", vec![]);
    let error = runtime.set_executor(Some(&preset), second).expect_err("second install");
    assert_eq!(error.kind, SetExecutorErrorKind::AlreadySet);
    assert_eq!(error.message, "a tool executor is already set for scope \"preset\"");
    let (global, _) = hiding("global", vec![]);
    let _g = runtime.set_executor(None, global).expect("global install");
    let (again, _) = hiding("again", vec![]);
    assert_eq!(runtime.set_executor(None, again).expect_err("again").message, "a tool executor is already set for the global scope");
    // The first stays installed.
    let _t = runtime.register(tool("t"), None).expect("register");
    let _ = block_on(runtime.execute(ToolExecutionInput::new("c1", "t", json!({})).with_agent(&preset)));
    assert_eq!(*seen.lock().expect("seen"), ["first:t"]);
}

#[test]
fn the_nearest_scope_wins() {
    let (runtime, prompt) = with_prompt();
    let preset = ScopeKey::new("preset");
    let agent = ScopeKey::child("agent", &preset);
    let inner = ScopeKey::child("inner", &agent);
    let other = ScopeKey::new("other");
    for name in ["a", "b", "c"] {
        runtime.register(tool(name), None).expect("register").forget();
    }
    let (global, _) = hiding("global", vec!["a"]);
    let _g = runtime.set_executor(None, global).expect("install");
    let (at_preset, _) = hiding("preset", vec!["b"]);
    let _p = runtime.set_executor(Some(&preset), at_preset).expect("install");
    let (at_inner, _) = hiding("inner", vec!["c"]);
    let _i = runtime.set_executor(Some(&inner), at_inner).expect("install");
    let tools = |scope: &ScopeKey| names(&prompt.assemble(Some(scope)).expect("assemble").tools);
    assert_eq!(tools(&agent), ["a", "c"]);
    assert_eq!(tools(&inner), ["a", "b"]);
    assert_eq!(tools(&other), ["b", "c"]);
    assert_eq!(names(&prompt.assemble(None).expect("assemble").tools), ["b", "c"]);
}

#[test]
fn dropping_the_guard_uninstalls() {
    let (runtime, prompt) = with_prompt();
    let preset = ScopeKey::new("preset");
    runtime.register(tool("a"), None).expect("register").forget();
    let (executor, _) = hiding("codemode", vec!["a"]);
    let guard = runtime.set_executor(Some(&preset), executor).expect("install");
    assert!(prompt.assemble(Some(&preset)).expect("assemble").tools.is_empty());
    drop(guard);
    let assembly = prompt.assemble(Some(&preset)).expect("assemble");
    assert_eq!(names(&assembly.tools), ["a"]);
    assert!(assembly.sections.iter().all(|s| s.name != "tools:sdk"), "the section went with the executor");
    // Disposing the scope uninstalls too, and a fresh install is then accepted.
    let (executor, _) = hiding("codemode", vec!["a"]);
    let _kept = runtime.set_executor(Some(&preset), executor).expect("install");
    runtime.dispose_scope(&preset);
    assert_eq!(names(&prompt.assemble(Some(&preset)).expect("assemble").tools), ["a"]);
    let (executor, _) = hiding("codemode", vec!["a"]);
    assert!(runtime.set_executor(Some(&preset), executor).is_ok());
}

#[test]
fn sections_are_registered_on_the_executors_behalf() {
    let (runtime, prompt) = with_prompt();
    let preset = ScopeKey::new("preset");
    let agent = ScopeKey::child("agent", &preset);
    let (executor, _) = hiding("Code Mode instructions", vec![]);
    let _e = runtime.set_executor(Some(&preset), executor).expect("install");
    let assembly = prompt.assemble(Some(&agent)).expect("assemble");
    let sdk: Vec<_> = assembly.sections.iter().filter(|s| s.name == "tools:sdk").collect();
    assert_eq!(sdk.len(), 1);
    assert_eq!(sdk[0].text, "Code Mode instructions");
    // A preset row registering the same name in that scope collides.
    let row = PromptSection { name: "tools:sdk".into(), order: 1.0, text: SectionText::Static("row".into()) };
    let error = prompt.section(Some(&preset), row).expect_err("collision");
    assert_eq!(error.message, "prompt section \"tools:sdk\" is already registered in this scope");
    // And an executor whose section collides with one already there is not installed.
    let other = ScopeKey::new("other");
    let row = PromptSection { name: "tools:sdk".into(), order: 1.0, text: SectionText::Static("row".into()) };
    let _row = prompt.section(Some(&other), row).expect("row");
    let (executor, _) = hiding("x", vec![]);
    let error = runtime.set_executor(Some(&other), executor).expect_err("collision");
    assert_eq!(error.kind, SetExecutorErrorKind::Section);
    let (executor, _) = hiding("x", vec![]);
    assert_eq!(
        runtime.set_executor(Some(&other), executor).expect_err("still the section").kind,
        SetExecutorErrorKind::Section,
        "the failed install left no executor behind"
    );
}

#[test]
fn execute_goes_to_the_executor_which_may_delegate_and_every_result_is_observed_once() {
    let (runtime, _prompt) = with_prompt();
    let preset = ScopeKey::new("preset");
    let agent = ScopeKey::child("agent", &preset);
    runtime.register(tool("t"), None).expect("register").forget();
    runtime.register(tool("blocked"), None).expect("register").forget();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let observed = Arc::clone(&bodies);
    let _o = runtime.on_result(Arc::new(move |execution, _| {
        observed.lock().unwrap_or_else(|p| p.into_inner()).push(format!("{}:{}:{}", execution.call_id, execution.name, execution.arguments));
    }));
    let (executor, seen) = hiding("codemode", vec![]);
    let _e = runtime.set_executor(Some(&preset), executor).expect("install");
    let ran = block_on(runtime.execute(ToolExecutionInput::new("c1", "t", json!({})).with_agent(&agent)));
    assert_eq!(ran.text(), "\"ran t\"");
    let denied = block_on(runtime.execute(ToolExecutionInput::new("c2", "blocked", json!({ "why": [1] })).with_agent(&agent)));
    assert!(denied.is_error());
    // A global call has no executor on its chain.
    let _ = block_on(runtime.execute(ToolExecutionInput::new("c3", "t", json!({}))));
    assert_eq!(*seen.lock().expect("seen"), ["codemode:t", "codemode:blocked"]);
    // Every call's result reached the observers once: the executor's own answer too, with the call's
    // id and arguments (CDM-046).
    assert_eq!(*bodies.lock().expect("bodies"), ["c1:t:{}", "c2:blocked:{\"why\":[1]}", "c3:t:{}"]);
}
