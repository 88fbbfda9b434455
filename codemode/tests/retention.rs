//! REPL retention through the plugin (seed 002 § 保留执行环境): on a `persistent-in-memory` runtime one
//! environment per agent keeps its state across three `code_run` calls in TypeScript and Python, another
//! agent has its own, the environment is released when the agent scope is disposed and when the plugin
//! unloads — each owner exactly once — and a `per-call` runtime keeps nothing.
//!
//! Spec: CDM-036, CDM-037, CDM-038, CDM-039.

#![allow(clippy::unwrap_used)] // tests fail loudly

mod common;

use std::sync::{Arc, Mutex};

use common::World;
use dsh_tools::code::python::PythonRuntime;
use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::code::{CodeExecutionMode, CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeLimits, CodeRuntimeMisuse, StateOwner};
use dsh_tools::{BoxFuture, ScopeKey, ToolExecutionInput};
use serde_json::{Value, json};

fn persistent_typescript() -> Arc<dyn CodeRuntime> {
    Arc::new(TypeScriptRuntime::new(CodeRuntimeLimits::default()).unwrap().with_execution_mode(CodeExecutionMode::PersistentInMemory))
}

fn persistent_python() -> Arc<dyn CodeRuntime> {
    Arc::new(PythonRuntime::new(CodeRuntimeLimits::default()).unwrap().with_execution_mode(CodeExecutionMode::PersistentInMemory))
}

async fn run_as(world: &World, agent: &ScopeKey, code: &str) -> Value {
    let input = ToolExecutionInput::new("c", "code_run", json!({ "code": code, "description": "retention" })).with_agent(agent);
    let json = world.runtime.execute(input).await.to_json();
    assert_eq!(json["isError"], false, "{json}");
    json["value"]["result"].clone()
}

#[tokio::test]
async fn three_calls_share_one_environment_in_both_languages() {
    let programs = [
        (persistent_typescript(), ["globalThis.x = 41; function f() { return x + 1 }", "const y = f(); return y", "return [y, typeof f]"], json!([42, "function"])),
        (persistent_python(), ["import json\nx = 41\ndef f():\n    return x + 1", "y = f()\nreturn y", "return [json.dumps(y), callable(f)]"], json!(["42", true])),
    ];
    for (code, [first, second, third], expected) in programs {
        let world = World::new(Arc::clone(&code));
        run_as(&world, &world.agent, first).await;
        assert_eq!(run_as(&world, &world.agent, second).await, json!(42));
        assert_eq!(run_as(&world, &world.agent, third).await, expected);
        // A second agent under the preset has an environment of its own.
        let other = ScopeKey::child("A2", &world.preset);
        let fresh = if code.language() == "python" { "return 'x' in globals()" } else { "return typeof x !== 'undefined'" };
        assert_eq!(run_as(&world, &other, fresh).await, json!(false));
        assert_eq!(code.retained().len(), 2);
        // Dropping the agent releases its environment; unloading the plugin releases the rest.
        world.runtime.dispose_scope(&world.agent);
        assert_eq!(code.retained().len(), 1);
        let mut world = world;
        drop(world.plugin.take());
        assert!(code.retained().is_empty());
    }
}

#[tokio::test]
async fn per_call_runtimes_keep_nothing() {
    let world = World::new(common::typescript());
    run_as(&world, &world.agent, "globalThis.x = 1; var v = 2").await;
    assert_eq!(run_as(&world, &world.agent, "return [typeof x, typeof v]").await, json!(["undefined", "undefined"]));
}

/// A runtime recording each owner it is asked to run for and to release.
#[derive(Default)]
struct Recorder {
    runs: Mutex<Vec<Option<StateOwner>>>,
    releases: Mutex<Vec<StateOwner>>,
}

impl CodeRuntime for Recorder {
    fn language(&self) -> &str {
        "typescript"
    }

    fn run(&self, request: CodeRunRequest) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeMisuse>> {
        self.runs.lock().unwrap().push(request.state_owner.clone());
        Box::pin(async { Ok(CodeRunResult::default()) })
    }

    fn execution_mode(&self) -> CodeExecutionMode {
        CodeExecutionMode::PersistentInMemory
    }

    fn release(&self, owner: &StateOwner) -> bool {
        self.releases.lock().unwrap().push(owner.clone());
        true
    }
}

#[tokio::test]
async fn each_owner_is_released_exactly_once_on_either_path() {
    let recorder = Arc::new(Recorder::default());
    let mut world = World::new(Arc::clone(&recorder) as Arc<dyn CodeRuntime>);
    let other = ScopeKey::child("A2", &world.preset);
    for _ in 0..5 {
        run_as(&world, &world.agent, "return 1").await;
    }
    run_as(&world, &other, "return 1").await;
    let runs = recorder.runs.lock().unwrap().clone();
    assert_eq!(runs.len(), 6);
    assert!(runs[..5].iter().all(|owner| owner == &runs[0]) && runs[0].is_some(), "one owner per agent: {runs:?}");
    assert_ne!(runs[5], runs[0]);
    // The agent path, then the plugin path; neither repeats the other's release.
    world.runtime.dispose_scope(&world.agent);
    assert_eq!(recorder.releases.lock().unwrap().clone(), [runs[0].clone().unwrap()]);
    drop(world.plugin.take());
    world.runtime.dispose_scope(&other);
    assert_eq!(recorder.releases.lock().unwrap().clone(), [runs[0].clone().unwrap(), runs[5].clone().unwrap()]);
    // A call with no agent (the plugin mounted at the host layer) has no owner.
    let mut world = World::bare();
    world.apply(Arc::clone(&recorder) as Arc<dyn CodeRuntime>, false);
    let input = ToolExecutionInput::new("c", "code_run", json!({ "code": "return 1", "description": "d" }));
    world.runtime.execute(input).await;
    assert_eq!(recorder.runs.lock().unwrap().last().cloned(), Some(None));
    drop(world.plugin.take());
}
