//! The typed tool builder (`dsh_tools::typed`) end to end through a `ToolRuntime`: serde arguments
//! (arguments the schema or serde rejects are `INVALID_ARGS` and the body never runs), the serialized output as the
//! result's value, the default and custom renders, `ToolContext::defer_context`, `concurrency_safe`,
//! lowered schemas that the SDK renders as real types (enums, tagged enums, options, maps included), and
//! build errors that name the tool.
#![cfg(feature = "typed")]
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_tools::typed::{Declaration, JsonSchema, TypedTool, TypedToolErrorKind, tool};
use dsh_tools::{ErrorCode, ExecutionMode, ToolExecutionInput, ToolFailure, ToolRuntime, content};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Deserialize, Serialize, JsonSchema)]
struct WeatherArgs {
    /// The city.
    city: String,
    /// Days to forecast (default 1).
    days: Option<u32>,
}

#[derive(Deserialize, Serialize, JsonSchema)]
struct Forecast {
    city: String,
    highs: Vec<f64>,
}

fn weather(calls: Arc<AtomicUsize>) -> TypedTool<WeatherArgs, Forecast> {
    TypedTool::new("weather", "Daily highs for a city", move |args: WeatherArgs, _ctx| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move { Ok(Forecast { city: args.city, highs: vec![21.5; args.days.unwrap_or(1) as usize] }) }
    })
}

#[tokio::test]
async fn arguments_deserialize_and_the_output_is_the_value() {
    let rt = ToolRuntime::new(Default::default());
    let _weather = rt.register(weather(Arc::default()).build().unwrap(), None).unwrap();
    let result = rt.execute(ToolExecutionInput::new("c1", "weather", json!({ "city": "Oslo", "days": 2 }))).await;
    assert!(!result.is_error(), "{}", result.to_json());
    assert_eq!(result.to_json()["value"], json!({ "city": "Oslo", "highs": [21.5, 21.5] }));
    assert_eq!(result.text(), r#"{"city":"Oslo","highs":[21.5,21.5]}"#);
}

#[tokio::test]
async fn bad_arguments_are_invalid_args_and_skip_the_body() {
    let calls = Arc::new(AtomicUsize::new(0));
    let rt = ToolRuntime::new(Default::default());
    let _weather = rt.register(weather(Arc::clone(&calls)).build().unwrap(), None).unwrap();
    let result = rt.execute(ToolExecutionInput::new("c1", "weather", json!({ "days": 2 }))).await;
    assert_eq!(result.error_code(), Some(&ErrorCode::INVALID_ARGS));
    assert_eq!(result.text(), r#"Error: invalid arguments: missing required property "city""#);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_custom_render_sees_typed_arguments_and_output() {
    let tool = weather(Arc::default())
        .render(|args: &WeatherArgs, f: &Forecast| vec![content::text(format!("{} ({:?} days): {:?}", f.city, args.days, f.highs))])
        .build()
        .unwrap();
    let rt = ToolRuntime::new(Default::default());
    let _weather = rt.register(tool, None).unwrap();
    let result = rt.execute(ToolExecutionInput::new("c1", "weather", json!({ "city": "Rome" }))).await;
    assert_eq!(result.text(), "Rome (None days): [21.5]");
}

#[tokio::test]
async fn the_context_defers_and_a_failure_is_a_result() {
    #[derive(Deserialize, JsonSchema)]
    struct Empty {}
    let rt = ToolRuntime::new(Default::default());
    let failing = tool("fail", "Always fails", |_: Empty, ctx| async move {
        ctx.defer_context(json!({ "role": "user", "content": "see the log" }));
        Err::<(), _>(ToolFailure::message(format!("{} cannot run", ctx.tool_name())))
    })
    .unwrap();
    let _failing = rt.register(failing, None).unwrap();
    let result = rt.execute(ToolExecutionInput::new("c1", "fail", json!({}))).await;
    assert!(result.is_error());
    assert_eq!(result.text(), "Error: fail cannot run");
    assert_eq!(result.additional_contexts(), &[json!({ "role": "user", "content": "see the log" })]);
}

#[test]
fn concurrency_safe_makes_calls_parallel() {
    let rt = ToolRuntime::new(Default::default());
    let _plain = rt.register(weather(Arc::default()).build().unwrap(), None).unwrap();
    let input = ToolExecutionInput::new("c1", "weather", json!({ "city": "Oslo" }));
    assert_eq!(rt.execution_mode(&input), ExecutionMode::Exclusive);
    drop(_plain);
    let _safe = rt.register(weather(Arc::default()).concurrency_safe(true).build().unwrap(), None).unwrap();
    assert_eq!(rt.execution_mode(&input), ExecutionMode::Parallel);
}

#[test]
fn the_sdk_sees_real_types_not_unknown() {
    let (definition, changes) = weather(Arc::default()).build_with_changes().unwrap();
    let rt = ToolRuntime::new(Default::default());
    let _weather = rt.register(definition, None).unwrap();
    let sdk = dsh_tools::sdk::render_tools_sdk(&rt.sdk_schemas(None));
    assert!(sdk.contains("city: string"), "{sdk}");
    assert!(sdk.contains("highs: number[]"), "{sdk}");
    // schemars' `$schema`, `title` and the integer `format` do not reach the model; the lowering says so.
    let dropped: Vec<&str> = changes.arguments.iter().map(|c| c.keyword.as_str()).collect();
    assert!(dropped.contains(&"$schema") && dropped.contains(&"format"), "{dropped:?}");
}

#[test]
fn build_errors_name_the_tool() {
    let not_object = tool("count", "A bare number", |n: u32, _| async move { Ok(n) }).unwrap_err();
    assert_eq!(not_object.tool, "count");
    assert_eq!(not_object.declaration, Declaration::Arguments);
    assert!(matches!(not_object.kind, TypedToolErrorKind::ArgumentsNotObject));
    assert!(not_object.to_string().starts_with("tool \"count\": arguments schema:"), "{not_object}");

    #[derive(Deserialize, Serialize, JsonSchema)]
    struct Tree {
        children: Vec<Tree>,
    }
    let recursive = tool("tree", "A recursive output", |_: WeatherArgs, _| async move { Ok(Tree { children: vec![] }) });
    let error = recursive.unwrap_err();
    assert_eq!((error.tool.as_str(), error.declaration), ("tree", Declaration::Output));
    let TypedToolErrorKind::Lowering(lowering) = &error.kind else { panic!("{error}") };
    assert_eq!(lowering.keyword, "$ref", "{error}");
    assert!(error.to_string().contains("`$ref`"), "{error}");
}

#[tokio::test]
async fn everyday_serde_shapes_build_register_and_round_trip() {
    use std::collections::BTreeMap;

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Unit {
        Celsius,
        Fahrenheit,
    }
    #[derive(Deserialize, Serialize, JsonSchema)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Reading {
        Point { value: f64 },
        Range { low: f64, high: f64 },
    }
    #[derive(Deserialize, Serialize, JsonSchema)]
    struct Query {
        station: String,
        unit: Option<Unit>,
        tags: Option<Vec<String>>,
        #[serde(default)]
        limits: BTreeMap<String, u32>,
    }
    #[derive(Deserialize, Serialize, JsonSchema)]
    struct Report {
        unit: Unit,
        readings: Vec<Reading>,
        note: Option<String>,
    }
    let report = TypedTool::new("report", "Station readings", |q: Query, _| async move {
        let unit = q.unit.unwrap_or(Unit::Celsius);
        Ok(Report { unit, readings: vec![Reading::Point { value: 1.5 }, Reading::Range { low: 0.0, high: 2.0 }], note: None })
    })
    .build()
    .unwrap();
    let rt = ToolRuntime::new(Default::default());
    let _report = rt.register(report, None).unwrap();
    let args = json!({ "station": "X1", "unit": "fahrenheit", "tags": null, "limits": { "a": 1 } });
    let result = rt.execute(ToolExecutionInput::new("c1", "report", args)).await;
    assert!(!result.is_error(), "{}", result.to_json());
    assert_eq!(
        result.to_json()["value"],
        json!({ "unit": "fahrenheit", "readings": [{ "kind": "point", "value": 1.5 }, { "kind": "range", "low": 0, "high": 2 }], "note": null })
    );
    let sdk = dsh_tools::sdk::render_tools_sdk(&rt.sdk_schemas(None));
    assert!(!sdk.contains("report: unknown") && sdk.contains("\"celsius\""), "{sdk}");
}

#[tokio::test]
async fn a_body_that_stops_on_cancellation_yields_the_coded_aborted_result() {
    #[derive(Deserialize, JsonSchema)]
    struct Empty {}
    let started = Arc::new(tokio::sync::Notify::new());
    let notify = Arc::clone(&started);
    let rt = ToolRuntime::new(Default::default());
    let slow = tool("slow", "Wait for a result that never comes", move |_: Empty, ctx| {
        let started = Arc::clone(&notify);
        async move {
            started.notify_one();
            ctx.until_cancelled(std::future::pending::<()>()).await?;
            ctx.check_cancelled()?;
            Ok("unreachable")
        }
    })
    .unwrap();
    let _slow = rt.register(slow, None).unwrap();
    let signal = dsh_tools::CancellationToken::new();
    let call = rt.execute(ToolExecutionInput::new("c1", "slow", json!({})).with_signal(signal.clone()));
    let (result, ()) = tokio::join!(call, async {
        started.notified().await;
        signal.cancel();
    });
    assert_eq!(result.error_code(), Some(&ErrorCode::ABORTED));
    assert_eq!(result.to_json()["error"], json!({ "message": "tool call aborted", "info": { "name": "AbortError", "code": "ABORTED" } }));
}
