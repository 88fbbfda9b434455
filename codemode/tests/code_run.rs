//! `code_run` on the TypeScript and Python runtimes: program calls through the whole pipeline with the
//! nested marker and `:ptc:` ids, policy, shadows, output curation, no dispatch log, the discovery tools
//! from programs, the seed's end-to-end check, argument validation, per-call freshness, and abort.
//!
//! Spec: CDM-011, CDM-024, CDM-027..CDM-034, CDM-037.

#![allow(clippy::unwrap_used)] // tests fail loudly

mod common;

use std::sync::{Arc, Mutex};

use common::{World, typescript};
use dsh_tools::code::CodeRuntimeLimits;
use dsh_tools::code::python::PythonRuntime;
use dsh_tools::code::CodeRuntime;
use dsh_tools::{CancellationToken, ErrorCode, PreToolDecision, ToolExecutionInput, guard_fn, pre_execute_fn, result_observer_fn};
use serde_json::{Value, json};

fn python() -> Arc<dyn CodeRuntime> {
    Arc::new(PythonRuntime::new(CodeRuntimeLimits::default()).unwrap())
}

fn value(result: &dsh_tools::ToolExecutionResult) -> Value {
    let json = result.to_json();
    assert_eq!(json["isError"], false, "{json}");
    json["value"]["result"].clone()
}

#[tokio::test]
async fn code_run_runs_typescript_and_python() {
    let world = World::new(typescript());
    let result = world.code_run("const n: number = 40; console.log('hi'); return n + 2;").await;
    assert_eq!(result.to_json()["value"], json!({ "logs": ["hi"], "result": 42 }));
    assert_eq!(result.text(), "hi\n42");
    let world = World::new(python());
    let result = world.code_run("print('hi')\nreturn 40 + 2").await;
    assert_eq!(result.to_json()["value"], json!({ "logs": ["hi"], "result": 42 }));
}

#[tokio::test]
async fn program_calls_run_the_whole_pipeline() {
    let world = World::new(typescript());
    let result = world
        .code_run("return [await tools.g_echo({}), await tools.a_echo({}), await tools.mcp__fake__ticker({})];")
        .await;
    assert_eq!(value(&result), json!(["G:g_echo", "A:a_echo", "G:mcp__fake__ticker"]));
    let seen = world.take_seen();
    for name in ["g_echo", "a_echo", "mcp__fake__ticker"] {
        for stage in ["pre", "guard", "around", "post"] {
            assert!(seen.contains(&format!("{stage}:{name}")), "{stage}:{name} missing from {seen:?}");
        }
    }
}

#[tokio::test]
async fn program_calls_carry_the_marker_and_ptc_ids() {
    let world = World::new(typescript());
    let calls = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&calls);
    let _o = world.runtime.on_result(result_observer_fn(move |exec, _| {
        recorded.lock().unwrap().push((exec.call_id.clone(), exec.name.clone(), exec.parent, exec.token, exec.root_call_id.clone()));
    }));
    let _ = world.code_run("await tools.g_echo({}); await tools.p_echo({}); return 1;").await;
    let calls = calls.lock().unwrap();
    let (outer_id, _, outer_parent, outer_token, _) = calls.iter().find(|c| c.1 == "code_run").unwrap().clone();
    assert_eq!(outer_parent, None);
    let subs: Vec<_> = calls.iter().filter(|c| c.1 != "code_run").collect();
    assert_eq!(subs.len(), 2);
    for (n, (id, _, parent, _, root)) in subs.iter().enumerate() {
        assert_eq!(*id, format!("{outer_id}:ptc:{}", n + 1));
        assert_eq!(*parent, Some(outer_token), "the nested marker: this code_run's token");
        assert_eq!(*root, outer_id);
    }
}

#[tokio::test]
async fn policy_holds_for_program_calls() {
    let world = World::new(typescript());
    let _deny = world.runtime.on_pre_execute(None, pre_execute_fn(|exec, next| {
        if exec.name == "g_echo" {
            return Box::pin(async { Ok(PreToolDecision::Deny { reason: "no g_echo".into() }) });
        }
        next.run()
    }));
    let result = world
        .code_run("try { await tools.g_echo({}); return 'ran'; } catch (e) { return `${e.name}/${e.toolName}: ${e.message}`; }")
        .await;
    assert_eq!(value(&result), json!("ToolCallError/g_echo: no g_echo"));
    assert!(!world.take_bodies().contains(&"g_echo".to_owned()), "the body did not run");
}

#[tokio::test]
async fn a_program_call_to_a_shadow_runs_the_preset_body() {
    let world = World::new(typescript());
    assert_eq!(value(&world.code_run("return await tools.shadow({});").await), json!("P:shadow"));
}

#[tokio::test]
async fn only_the_programs_output_reaches_the_model() {
    let world = World::new(typescript());
    let result = world.code_run("const secret = await tools.g_echo({}); return 'done';").await;
    assert_eq!(result.text(), "done");
    assert!(!result.text().contains("G:g_echo"));
}

#[tokio::test]
async fn program_calls_write_no_dispatch_log() {
    let world = World::new(typescript());
    let log = Arc::new(Mutex::new(0));
    let counted = Arc::clone(&log);
    let _d = world.runtime.on_code_dispatch(Arc::new(move |_| *counted.lock().unwrap() += 1));
    let result = world.code_run("await tools.g_echo({}); await tools.a_echo({}); return await tools.p_echo({});").await;
    assert_eq!(value(&result), json!("P:p_echo"));
    assert_eq!(*log.lock().unwrap(), 0);
}

const END_TO_END_TS: &str = "const hits = await tools.code_tools_search({ query: 'ticker' });\nreturn await tools[hits[0].name]({});";
const END_TO_END_PY: &str = "hits = await tools.code_tools_search({'query': 'ticker'})\nreturn await getattr(tools, hits[0]['name'])({})";

#[tokio::test]
async fn the_seeds_end_to_end_check() {
    for (code, program) in [(typescript(), END_TO_END_TS), (python(), END_TO_END_PY)] {
        let language = code.language().to_owned();
        let world = World::new(code);
        // The three fake MCP tools are not in the model's list ...
        assert!(world.surface(&world.agent).iter().all(|n| !n.starts_with("mcp__fake__")), "{language}");
        // ... and one code_run finds `ticker`, calls the hit and returns its result.
        let result = world.code_run(program).await;
        assert_eq!(value(&result), json!("G:mcp__fake__ticker"), "{language}");
        assert_eq!(result.text(), "G:mcp__fake__ticker", "{language}");
    }
}

#[tokio::test]
async fn discovery_classification_agrees_with_the_request() {
    let world = World::new(typescript());
    let surface = world.surface(&world.agent);
    let listed = value(&world.code_run("return await tools.code_tools_list({});").await);
    let entries = listed.as_array().unwrap();
    assert_eq!(entries.len(), world.runtime.schemas(Some(&world.agent)).len());
    for entry in entries {
        let name = entry["name"].as_str().unwrap();
        let native = entry["presentation"] == "native";
        assert_eq!(native, surface.contains(&name.to_owned()), "{name}");
    }
    let described = value(&world.code_run("return await tools.code_tools_describe({ name: 'g_echo' });").await);
    assert_eq!(described["presentation"], "program-only");
    assert_eq!(described["parameters"]["type"], "object");
    let debug = value(&world.code_run("return await tools.code_debug({});").await);
    assert_eq!(debug["scopeLabel"], "P");
    assert_eq!(debug["agent"], "A");
    assert_eq!(debug["ownership"], true);
}

#[tokio::test]
async fn discovery_tools_validate_their_arguments() {
    let world = World::new(typescript());
    let result = world
        .code_run("try { await tools.code_tools_search({ query: 1 }); } catch (e) { return e.message; }")
        .await;
    let message = value(&result);
    assert!(message.as_str().unwrap().starts_with("invalid arguments:"), "{message}");
}

#[tokio::test]
async fn a_guard_denies_a_discovery_call() {
    let world = World::new(typescript());
    let _g = world.runtime.guard(None, guard_fn(|exec| (exec.name == "code_tools_list").then(|| "not here".to_owned())));
    let result = world.code_run("try { await tools.code_tools_list({}); } catch (e) { return e.message; }").await;
    assert_eq!(value(&result), json!("not here"));
}

#[tokio::test]
async fn lossy_code_run_arguments_fail_validation() {
    let world = World::new(typescript());
    let result = world.direct(&world.agent, "code_run", json!({ "code": 1, "description": "d" })).await;
    assert_eq!(result.error_code(), Some(&ErrorCode::INVALID_ARGS));
    let result = world.direct(&world.agent, "code_run", json!({ "code": "return 1" })).await;
    assert_eq!(result.to_json()["error"]["message"], "invalid arguments: missing required property \"description\"");
    let result = world.direct(&world.agent, "code_run", json!({ "code": "return 1", "description": "  " })).await;
    assert_eq!(result.to_json()["error"]["message"], "invalid description: expected a non-empty string");
    assert!(world.take_bodies().is_empty());
}

#[tokio::test]
async fn per_call_mode_keeps_nothing() {
    let world = World::new(typescript());
    let _ = world.code_run("globalThis.x = 41; return 0;").await;
    assert_eq!(value(&world.code_run("return typeof x;").await), json!("undefined"));
    let world = World::new(python());
    let _ = world.code_run("global x\nx = 41\nreturn 0").await;
    assert_eq!(value(&world.code_run("return 'x' in globals()").await), json!(false));
}

/// Start `call_run`, a `code_run` whose program never settles, under the world's agent: its signal and the
/// spawned call.
fn start_hanging_run(world: &World) -> (CancellationToken, tokio::task::JoinHandle<dsh_tools::ToolExecutionResult>) {
    let signal = CancellationToken::new();
    let input = ToolExecutionInput::new("call_run", "code_run", json!({ "code": "await new Promise(() => {});", "description": "hang" }))
        .with_agent(&world.agent)
        .with_signal(signal.clone());
    let runtime = world.runtime.clone();
    (signal, tokio::spawn(async move { runtime.execute(input).await }))
}

#[tokio::test]
async fn an_aborted_code_run_ends_with_its_program() {
    let world = World::new(typescript());
    let (signal, call) = start_hanging_run(&world);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    signal.cancel();
    let result = tokio::time::timeout(std::time::Duration::from_secs(10), call).await.unwrap().unwrap();
    // As rc.8's run_code (RUN-032): the run fails with kind `abort`; cancellation replaces only a success.
    assert_eq!(result.error_code(), Some(&ErrorCode::CODE_RUN_FAILED), "{}", result.to_json());
    assert_eq!(result.to_json()["error"]["message"], "code run failed (abort): AbortError: This operation was aborted");
}

#[tokio::test]
async fn an_aborted_code_run_carries_its_callers_reason() {
    let world = World::new(typescript());
    // The harness's `call/abort` path: the reason is attached to the execution before its signal fires.
    let token = Arc::new(Mutex::new(None));
    let _capture = {
        let token = Arc::clone(&token);
        world.runtime.on_pre_execute(
            None,
            pre_execute_fn(move |exec, next| {
                if exec.call_id == "call_run" {
                    *token.lock().unwrap() = Some(exec.token);
                }
                next.run()
            }),
        )
    };
    let (signal, call) = start_hanging_run(&world);
    for _ in 0..200 {
        if token.lock().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    world.runtime.set_abort_reason(token.lock().unwrap().unwrap(), "stopped by the user");
    signal.cancel();
    let result = tokio::time::timeout(std::time::Duration::from_secs(10), call).await.unwrap().unwrap();
    // RUN-032's relay: the caller's reason, not the default one, is what the model reads.
    assert_eq!(result.to_json()["error"]["message"], "code run failed (abort): stopped by the user", "{}", result.to_json());
}

/// The `tools` namespace's names are kept per registry generation (issue 39): a tool registered after a
/// run is a binding of the next run, and one dropped is no longer.
#[tokio::test]
async fn program_bindings_follow_registry_changes() {
    let world = World::new(typescript());
    let program = "return ['late_echo' in tools, 'g_echo' in tools];";
    assert_eq!(value(&world.code_run(program).await), json!([false, true]));
    let late = world.runtime.register(common::tool("late_echo", "G", &world.bodies), None).unwrap();
    assert_eq!(value(&world.code_run(program).await), json!([true, true]));
    assert_eq!(value(&world.code_run("return await tools.late_echo({});").await), json!("G:late_echo"));
    drop(late);
    assert_eq!(value(&world.code_run(program).await), json!([false, true]));
}
