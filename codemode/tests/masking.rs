//! Ownership masking, the request surface, the executor's section, the direct-call rejection and the
//! isolation of another preset, on the seed's layer layout (`common`).
//!
//! Spec: CDM-008..CDM-023, CDM-026, CDM-035.

#![allow(clippy::unwrap_used)] // tests fail loudly

mod common;

use std::sync::{Arc, Mutex};

use common::{World, typescript};
use dsh_codemode::rules::{DISCOVERY_TOOLS, HOST_MOUNT_WARNING};
use dsh_tools::{ErrorCode, ScopeKey, ToolExecutionInput, ToolRuntime, ToolsConfig, change_observer_fn};
use serde_json::json;

#[test]
fn ownership_classifies_every_layer() {
    let world = World::new(typescript());
    let surface = world.surface(&world.agent);
    // Preset-owned tools stay native (CDM-008); code_run is there (CDM-013).
    for native in ["read", "p_echo", "code_run"] {
        assert!(surface.contains(&native.to_owned()), "{native} missing from {surface:?}");
    }
    // Global-layer (CDM-009), agent-layer (CDM-010) and shadowed (CDM-011) names are masked.
    for masked in ["g_echo", "a_echo", "shadow", "mcp__fake__ticker"] {
        assert!(!surface.contains(&masked.to_owned()), "{masked} present in {surface:?}");
    }
}

#[test]
fn name_rule_masks_owned_tools() {
    let world = World::new(typescript());
    let surface = world.surface(&world.agent);
    assert!(!surface.contains(&"mcp__local__y".to_owned()), "an owned mcp__ tool is masked");
    for discovery in DISCOVERY_TOOLS {
        assert!(!surface.contains(&discovery.to_owned()), "{discovery} is masked");
        assert!(world.runtime.get(discovery, Some(&world.agent)).is_some(), "{discovery} is registered");
    }
}

#[test]
fn the_request_surface_is_native_tools_plus_code_run() {
    let world = World::new(typescript());
    let mut surface = world.surface(&world.agent);
    surface.sort();
    assert_eq!(surface, ["code_run", "p_echo", "read"]);
    // The facade's own view of the surface agrees with the prompt's.
    let mut direct: Vec<String> = world.runtime.request_schemas(Some(&world.agent)).into_iter().map(|s| s.name).collect();
    direct.sort();
    assert_eq!(direct, surface);
}

#[test]
fn the_seeds_fake_mcp_tools_vanish() {
    let bare = World::bare();
    let fake = |surface: Vec<String>| surface.into_iter().filter(|n| n.starts_with("mcp__fake__")).count();
    assert_eq!(fake(bare.surface(&bare.agent)), 3, "without the plugin the model sees them");
    let world = World::new(typescript());
    assert_eq!(fake(world.surface(&world.agent)), 0, "with it they vanish (CDM-035)");
}

#[test]
fn host_mount_falls_back_to_the_name_rule_and_warns_once() {
    let mut world = World::bare();
    world.apply(typescript(), false);
    let surface = world.surface(&world.agent);
    for native in ["g_echo", "a_echo", "read", "p_echo", "shadow", "code_run"] {
        assert!(surface.contains(&native.to_owned()), "{native} stays native at the host layer: {surface:?}");
    }
    for masked in ["mcp__fake__ticker", "mcp__local__y", "code_tools_list", "code_debug"] {
        assert!(!surface.contains(&masked.to_owned()), "{masked} is masked by name");
    }
    let _ = world.surface(&world.agent);
    let _ = world.surface(&world.standard_agent);
    assert_eq!(*world.warnings.lock().unwrap(), [HOST_MOUNT_WARNING], "one warning in total");
}

#[test]
fn masking_changes_nothing_in_the_registry() {
    let world = World::new(typescript());
    let changes = Arc::new(Mutex::new(0));
    let counted = Arc::clone(&changes);
    let _c = world.runtime.on_change(change_observer_fn(move || *counted.lock().unwrap() += 1));
    let before = world.runtime.schemas(Some(&world.agent));
    let _ = world.surface(&world.agent);
    let _ = world.surface(&world.agent);
    assert_eq!(*changes.lock().unwrap(), 0, "assembling emits no tools/change");
    let after = world.runtime.schemas(Some(&world.agent));
    assert_eq!(before.len(), after.len());
    for name in ["g_echo", "a_echo", "mcp__fake__ticker", "shadow"] {
        assert!(world.runtime.get(name, Some(&world.agent)).is_some(), "{name} still resolves");
    }
}

#[test]
fn the_sdk_section_comes_from_the_executor() {
    let world = World::new(typescript());
    let assembly = world.prompt.assemble(Some(&world.agent)).unwrap();
    let sdk: Vec<_> = assembly.sections.iter().filter(|s| s.name == "tools:sdk").collect();
    assert_eq!(sdk.len(), 1);
    assert!(sdk[0].text.contains("`code_run`"), "{}", sdk[0].text);
    assert!(sdk[0].text.contains("mcp__fake__ticker"), "the SDK declares the masked tools");
    assert!(assembly.sections.iter().all(|s| s.name != "tools:code-only"), "the registry stays native");
    // A preset row registering the same section collides (CDM-006).
    let row = dsh_tools::prompt::PromptSection {
        name: "tools:sdk".into(),
        order: 1.0,
        text: dsh_tools::prompt::SectionText::Static("row".into()),
    };
    assert!(world.prompt.section(Some(&world.preset), row).is_err());
}

#[test]
fn another_preset_is_untouched() {
    let world = World::new(typescript());
    let mut surface = world.surface(&world.standard_agent);
    surface.sort();
    assert_eq!(surface, ["g_echo", "mcp__fake__a", "mcp__fake__b", "mcp__fake__ticker", "s_echo", "shadow"]);
    let assembly = world.prompt.assemble(Some(&world.standard_agent)).unwrap();
    assert!(assembly.sections.iter().all(|s| s.name != "tools:sdk" || s.text.is_empty()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let result = rt.block_on(world.direct(&world.standard_agent, "g_echo", json!({})));
    assert_eq!(result.to_json()["value"], "G:g_echo");
}

#[tokio::test]
async fn a_direct_masked_call_is_rejected_before_dispatch() {
    let world = World::new(typescript());
    let result = world.direct(&world.agent, "g_echo", json!({})).await;
    assert_eq!(
        result.to_json()["error"],
        json!({
            "message": "unknown tool \"g_echo\": it is not callable directly — call `g_echo` from inside a `code_run` program instead",
            "info": { "name": "ToolNotFoundError", "code": "UNKNOWN_TOOL" },
        })
    );
    assert_eq!(world.take_seen(), Vec::<String>::new(), "no stage saw the call");
    assert_eq!(world.take_bodies(), Vec::<String>::new());
    // A native call beside it runs (CDM-023), through every stage.
    let result = world.direct(&world.agent, "p_echo", json!({})).await;
    assert_eq!(result.to_json()["value"], "P:p_echo");
    assert_eq!(world.take_seen(), ["pre:p_echo", "guard:p_echo", "around:p_echo", "post:p_echo"]);
}

#[tokio::test]
async fn discovery_tools_are_rejected_directly() {
    let world = World::new(typescript());
    for name in DISCOVERY_TOOLS {
        let result = world.direct(&world.agent, name, json!({ "query": "x", "name": "x" })).await;
        assert_eq!(result.error_code(), Some(&ErrorCode::UNKNOWN_TOOL), "{name}");
        assert!(result.text().contains("code_run"), "{name}: {}", result.text());
    }
    assert!(world.take_seen().is_empty());
}

#[tokio::test]
async fn masked_and_rejected_agree_for_every_name() {
    let world = World::new(typescript());
    let surface = world.surface(&world.agent);
    for schema in world.runtime.schemas(Some(&world.agent)) {
        let name = schema.name;
        let rejected = world.direct(&world.agent, &name, json!({})).await.text().contains("callable directly");
        assert_eq!(rejected, !surface.contains(&name), "{name}: rejected {rejected}, surface {surface:?}");
    }
}

#[tokio::test]
async fn an_unregistered_name_keeps_the_plain_unknown_tool() {
    let world = World::new(typescript());
    let result = world.direct(&world.agent, "nope", json!({})).await;
    assert_eq!(result.error_code(), Some(&ErrorCode::UNKNOWN_TOOL));
    assert_eq!(result.to_json()["error"]["message"], "unknown tool \"nope\"");
    // The native pipeline answered it: its policy stages saw the call (rc.8's dispatch-stage UNKNOWN_TOOL).
    assert_eq!(world.take_seen().first().map(String::as_str), Some("pre:nope"));
}

#[tokio::test]
async fn a_forged_id_or_a_stale_marker_is_rejected() {
    let world = World::new(typescript());
    // A `:ptc:` id without the marker.
    let forged = ToolExecutionInput::new("call_1:ptc:1", "g_echo", json!({})).with_agent(&world.agent);
    assert!(world.runtime.execute(forged).await.text().contains("callable directly"));
    // A parent token that is not a running code_run: take one from a finished call.
    let token = Arc::new(Mutex::new(None));
    let kept = Arc::clone(&token);
    let _o = world.runtime.on_result(dsh_tools::result_observer_fn(move |exec, _| {
        if exec.name == "p_echo" {
            *kept.lock().unwrap() = Some(exec.token);
        }
    }));
    let _ = world.direct(&world.agent, "p_echo", json!({})).await;
    let stale = token.lock().unwrap().unwrap();
    let mut marked = ToolExecutionInput::new("call_2:ptc:1", "g_echo", json!({})).with_agent(&world.agent);
    marked.parent = Some(stale);
    assert!(world.runtime.execute(marked).await.text().contains("callable directly"));
    world.take_seen();
    assert!(world.take_bodies().iter().all(|b| b != "g_echo"));
}

#[test]
fn the_transport_is_code_run() {
    let world = World::new(typescript());
    assert!(world.runtime.get("code_run", Some(&world.preset)).is_some());
    assert!(world.runtime.get("code_run", None).is_none(), "registered in the preset, not globally");
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let error = world.runtime.register(common::tool("run_code", "P", &bodies), Some(&world.preset)).unwrap_err();
    assert_eq!(
        error.message,
        "tool name \"run_code\" is reserved for the Code Mode presentation transport and cannot be registered or shadowed"
    );
    assert!(!world.surface(&world.agent).contains(&"run_code".to_owned()));
}

#[test]
fn unloading_restores_the_native_surface() {
    let mut world = World::new(typescript());
    world.plugin.take().unwrap().unload();
    let surface = world.surface(&world.agent);
    assert!(surface.contains(&"g_echo".to_owned()) && !surface.contains(&"code_run".to_owned()), "{surface:?}");
    assert!(world.runtime.get("code_tools_list", Some(&world.agent)).is_none());
}

#[test]
fn a_second_plugin_in_one_preset_is_rejected() {
    let world = World::new(typescript());
    let error = dsh_codemode::Codemode::apply(&world.runtime, Some(&world.preset), dsh_codemode::CodemodeConfig::new(typescript()))
        .expect_err("second plugin");
    assert!(error.message.contains("code_run"), "{error}");
    // The first is intact: still masking, still its tools.
    let mut surface = world.surface(&world.agent);
    surface.sort();
    assert_eq!(surface, ["code_run", "p_echo", "read"]);
    // A second executor alone (no tools) is refused by the seam with the scope's name.
    struct Passthrough;
    impl dsh_tools::ToolExecutor for Passthrough {
        fn describe(&self, definitions: Vec<dsh_tools::ToolSchema>) -> Vec<dsh_tools::ToolSchema> {
            definitions
        }
        fn execute(&self, input: ToolExecutionInput, native: dsh_tools::NativeExecutor) -> dsh_tools::BoxFuture<'static, dsh_tools::ToolExecutionResult> {
            native.execute(input)
        }
    }
    let error = world.runtime.set_executor(Some(&world.preset), Arc::new(Passthrough)).expect_err("second executor");
    assert_eq!(error.message, "a tool executor is already set for scope \"P\"");
}

/// A turn driven by dsh-tools' `TurnExecutor` under the preset: each call goes through the preset's
/// executor, so a masked direct call is rejected (no body runs) while a native one runs, in model order.
#[tokio::test]
async fn a_turn_executor_turn_goes_through_the_executor() {
    use dsh_tools::turn::TurnExecutor;
    let world = World::new(common::typescript());
    let calls = vec![
        ToolExecutionInput::new("t1", "g_echo", json!({})).with_agent(&world.agent),
        ToolExecutionInput::new("t2", "p_echo", json!({})).with_agent(&world.agent),
    ];
    let results = TurnExecutor::new(&world.runtime).execute(calls).await.results;
    assert_eq!(results.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["t1", "t2"]);
    assert_eq!(results[0].1.error_code(), Some(&ErrorCode::UNKNOWN_TOOL), "{}", results[0].1.to_json());
    assert_eq!(results[1].1.to_json()["value"], "P:p_echo");
    assert_eq!(world.take_bodies(), ["p_echo"]);
}

#[test]
fn a_preset_scope_the_runtime_does_not_know_is_refused() {
    // CDM-050: a key the runtime never opened (or another runtime's) names no preset any agent is under.
    let world = World::bare();
    for stray in [ScopeKey::new("P"), ToolRuntime::new(ToolsConfig::default()).open_scope("P", None)] {
        let error = dsh_codemode::Codemode::apply(&world.runtime, Some(&stray), dsh_codemode::CodemodeConfig::new(typescript()))
            .expect_err("an unknown preset");
        assert!(error.to_string().contains("the preset scope `P` is not one this runtime opened"), "{error}");
        assert!(world.runtime.get("code_run", Some(&stray)).is_none(), "nothing stays registered");
    }
    // A child of a scope the runtime opened is known; so is the opened scope itself.
    let child = ScopeKey::child("nested", &world.preset);
    assert!(world.runtime.knows_scope(&child) && world.runtime.knows_scope(&world.preset));
    let plugin = dsh_codemode::Codemode::apply(&world.runtime, Some(&child), dsh_codemode::CodemodeConfig::new(typescript()));
    assert!(plugin.is_ok(), "{:?}", plugin.err());
}
