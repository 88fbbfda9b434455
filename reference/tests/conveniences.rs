//! The embedder conveniences through a `ToolRuntime`: decision constructors (`PreToolDecision::ask`,
//! `PostToolDecision::{replace_value, block, with_contexts}`), wrapper-authored results
//! (`DispatchResult::{success, failure}`), `Duration` setters, and a `RegisterError` that names its tool
//! while keeping the exact message; and a post-execute listener that panics while awaited, which fails
//! the call with the panic's message as a thrown failure would.
#![cfg(feature = "typed")]
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use dsh_tools::code::CodeRuntimeLimits;
use dsh_tools::typed::{JsonSchema, tool};
use dsh_tools::{
    DispatchResult, PostToolDecision, PreToolDecision, ToolExecutionInput, ToolFailure, ToolRuntime, content,
    execute_wrapper_fn, post_execute_fn, pre_execute_fn,
};
use serde_json::json;

#[derive(serde::Deserialize, JsonSchema)]
struct Num {
    n: i64,
}

fn doubler(rt: &ToolRuntime) -> dsh_tools::Registration {
    rt.register(tool("double", "Double a number", |a: Num, _| async move { Ok(a.n * 2) }).unwrap(), None).unwrap()
}

fn call(n: i64) -> ToolExecutionInput {
    ToolExecutionInput::new("c1", "double", json!({ "n": n }))
}

#[tokio::test]
async fn ask_without_an_approver_is_a_denial_with_the_reason() {
    let rt = ToolRuntime::new(Default::default());
    let _double = doubler(&rt);
    let _ask = rt.on_pre_execute(None, pre_execute_fn(|_, _| Box::pin(async { Ok(PreToolDecision::ask("needs a human")) })));
    assert_eq!(rt.execute(call(2)).await.text(), "Error: needs a human");
}

#[tokio::test]
async fn post_execute_constructors_rewrite_the_outcome() {
    let rt = ToolRuntime::new(Default::default());
    let _double = doubler(&rt);
    let _post = rt.on_post_execute(
        None,
        post_execute_fn(|exec, _, _| {
            Box::pin(async move {
                Ok(match exec.arguments["n"].as_i64() {
                    Some(0) => PostToolDecision::block(vec![content::text("zero is not allowed")]),
                    _ => PostToolDecision::replace_value(json!(100)).with_contexts([json!("note")]),
                })
            })
        }),
    );
    let replaced = rt.execute(call(2)).await;
    assert_eq!((replaced.to_json()["value"].clone(), replaced.text()), (json!(100), "100".to_owned()));
    assert_eq!(replaced.additional_contexts(), &[json!("note")]);
    let blocked = rt.execute(call(0)).await;
    assert!(blocked.is_error());
    assert_eq!(blocked.text(), "zero is not allowed");
}

#[tokio::test]
async fn a_post_execute_listener_panicking_while_awaited_fails_the_call_with_its_message() {
    let rt = ToolRuntime::new(Default::default());
    let _double = doubler(&rt);
    let _post = rt.on_post_execute(
        None,
        post_execute_fn(|_, _, next| {
            Box::pin(async move {
                tokio::task::yield_now().await;
                if next.run().await.is_ok() {
                    panic!("post listener broke");
                }
                Ok(PostToolDecision::accept())
            })
        }),
    );
    let result = rt.execute(call(2)).await;
    assert!(result.is_error());
    assert_eq!(result.text(), "Error: post listener broke");
    assert_eq!(rt.execute(call(3)).await.text(), "Error: post listener broke", "the runtime stays usable");
}

#[tokio::test]
async fn wrapper_authored_results_are_checked_and_rendered() {
    let rt = ToolRuntime::new(Default::default());
    let _double = doubler(&rt);
    let _cache = rt.on_execute(
        None,
        execute_wrapper_fn(|exec, next| {
            Box::pin(async move {
                match exec.execution().arguments["n"].as_i64() {
                    Some(1) => Ok(DispatchResult::success(json!(2))),
                    Some(2) => Ok(DispatchResult::success(json!("not a number"))),
                    Some(3) => Ok(DispatchResult::failure(ToolFailure::message("cache offline"))),
                    _ => next.run().await,
                }
            })
        }),
    );
    assert_eq!(rt.execute(call(1)).await.text(), "2");
    let invalid = rt.execute(call(2)).await;
    assert_eq!(invalid.error_code().map(|c| c.as_str()), Some("INVALID_TOOL_OUTPUT"), "{}", invalid.to_json());
    assert_eq!(rt.execute(call(3)).await.text(), "Error: cache offline");
    assert_eq!(rt.execute(call(5)).await.text(), "10");
}

#[test]
fn durations_set_the_millisecond_fields() {
    let def = tool("double", "", |a: Num, _| async move { Ok(a.n) }).unwrap().with_timeout(Duration::from_millis(1500));
    assert_eq!(def.timeout_ms, Some(1500.0));
    assert_eq!(def.timeout(), Some(Duration::from_millis(1500)));
    let limits = CodeRuntimeLimits::default().with_compute(Duration::from_secs(2)).with_max_wall(Duration::from_millis(250));
    assert_eq!((limits.compute_ms, limits.max_wall_ms), (2000.0, 250.0));
}

#[test]
fn a_register_error_names_the_tool_and_keeps_the_message() {
    let rt = ToolRuntime::new(Default::default());
    let _double = doubler(&rt);
    let second = tool("double", "again", |a: Num, _| async move { Ok(a.n) }).unwrap();
    let error = rt.register(second, None).unwrap_err();
    assert_eq!(error.tool, "double");
    assert!(error.message.starts_with("tool \"double\" is already registered"), "{}", error.message);
    assert_eq!(error.to_string(), format!("cannot register tool \"double\": {}", error.message));
}
