//! A whole agent loop, with a scripted stand-in for the model: it replays recorded OpenAI Chat
//! Completions responses (tool calls in OpenAI's format), and the loop does what a real one does —
//! sends the tools in OpenAI's shape (`provider::openai::tools`), parses the model's tool calls into
//! calls (`parse_tool_calls`), runs each turn with the `TurnExecutor` under a policy hook, cancels one
//! call mid-turn (the user pressed Esc on a slow scan, found with `ToolRuntime::in_flight`), and answers
//! with tool messages (`tool_messages`), until the model stops calling tools. The same calls and results
//! go through Anthropic's shape too (`provider::anthropic`: `tool_use` blocks and back, `tool_result`s).
//!
//! Run: `cargo run -p dsh-tools --example agent_loop`. `.ci/run` runs it, and so does `cargo test`
//! (the example is also a test target).

use std::time::Duration;

use dsh_tools::provider::{ImageSource, anthropic, openai};
use dsh_tools::turn::TurnExecutor;
use dsh_tools::typed::{JsonSchema, TypedTool, tool};
use dsh_tools::{CancellationToken, ErrorCode, PreToolDecision, ToolRuntime, pre_execute_fn};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// City name, e.g. "Oslo".
    city: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Weather {
    city: String,
    celsius: f64,
}

#[derive(Deserialize, JsonSchema)]
struct ScanArgs {
    /// The directory to scan.
    path: String,
}

#[derive(Deserialize, JsonSchema)]
struct PathArgs {
    /// The file to delete.
    path: String,
}

/// The model: recorded `chat.completion` responses, replayed in order. It checks what it is sent as a
/// real model would read it: the tools, and one tool message per call of its previous turn.
struct ScriptedModel {
    responses: std::vec::IntoIter<Value>,
}

impl ScriptedModel {
    fn new() -> Self {
        let call = |id: &str, name: &str, args: Value| json!({ "id": id, "type": "function", "function": { "name": name, "arguments": args.to_string() } });
        let turn = |calls: Vec<Value>| json!({ "object": "chat.completion", "choices": [{ "index": 0, "finish_reason": "tool_calls",
            "message": { "role": "assistant", "content": null, "tool_calls": calls } }] });
        let responses = vec![
            turn(vec![
                call("call_1", "weather", json!({ "city": "Oslo" })),
                call("call_2", "weather", json!({ "city": "Rome" })),
                call("call_3", "scan", json!({ "path": "/" })),
                call("call_4", "delete_file", json!({ "path": "/etc/passwd" })),
            ]),
            turn(vec![call("call_5", "weather", json!({ "town": "Bergen" }))]),
            json!({ "object": "chat.completion", "choices": [{ "index": 0, "finish_reason": "stop",
                "message": { "role": "assistant", "content": "Oslo 4.5 °C, Rome 17 °C. I stopped the scan as you asked and did not delete /etc/passwd." } }] }),
        ];
        Self { responses: responses.into_iter() }
    }

    fn complete(&mut self, request: &Value) -> Value {
        let tools: Vec<&str> = request["tools"].as_array().into_iter().flatten().filter_map(|t| t["function"]["name"].as_str()).collect();
        assert_eq!(tools, ["weather", "scan", "delete_file"], "the model is shown every tool, in OpenAI's shape");
        let messages = request["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
        if let Some(asked) = messages.iter().rev().find(|m| m["role"] == "assistant") {
            let asked = asked["tool_calls"].as_array().map_or(0, Vec::len);
            let answered = messages.iter().rev().take_while(|m| m["role"] == "tool").count();
            assert_eq!(asked, answered, "every tool call of the last turn is answered");
        }
        self.responses.next().expect("the script has a response for every request")
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    agent_loop().await
}

/// `cargo test` runs the example too (`test = true` in Cargo.toml), not only `.ci/run`.
#[cfg(test)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_loop_runs_to_the_models_answer() {
    agent_loop().await.expect("the loop completes");
}

async fn agent_loop() -> Result<(), Box<dyn std::error::Error>> {
    let rt = ToolRuntime::new(Default::default());
    let weather = TypedTool::new("weather", "Current temperature in a city", |args: WeatherArgs, _ctx| async move {
        let celsius = if args.city == "Oslo" { 4.5 } else { 17.0 };
        Ok(Weather { city: args.city, celsius })
    })
    .concurrency_safe(true)
    .build()?;
    let scan = tool("scan", "Scan a directory tree (slow)", |args: ScanArgs, ctx| async move {
        // Stops when the call is cancelled: `?` returns the coded ABORTED failure.
        ctx.until_cancelled(tokio::time::sleep(Duration::from_secs(30))).await?;
        Ok(format!("scanned {}", args.path))
    })?;
    let delete = tool("delete_file", "Delete a file", |args: PathArgs, _ctx| async move { Ok(format!("deleted {}", args.path)) })?;
    let _tools = [rt.register(weather, None)?, rt.register(scan, None)?, rt.register(delete, None)?];

    // Policy: no deletions outside /tmp.
    let _policy = rt.on_pre_execute(
        None,
        pre_execute_fn(|exec, next| {
            Box::pin(async move {
                if exec.name == "delete_file" && exec.arguments["path"].as_str().is_some_and(|p| !p.starts_with("/tmp/")) {
                    return Ok(PreToolDecision::deny("deleting outside /tmp is not allowed"));
                }
                next.run().await
            })
        }),
    );

    let mut model = ScriptedModel::new();
    let mut messages = vec![json!({ "role": "user", "content": "Weather in Oslo and Rome? Scan / and delete /etc/passwd." })];
    let turns = TurnExecutor::new(&rt).max_parallel(4);
    let mut all_results = Vec::new();
    let answer = loop {
        let request = json!({ "model": "scripted", "messages": messages, "tools": openai::tools(&rt.schemas(None)) });
        let response = model.complete(&request);
        let calls = openai::parse_tool_calls(&response)?;
        let message = response["choices"][0]["message"].clone();
        messages.push(message.clone());
        if calls.is_empty() {
            break message["content"].as_str().unwrap_or_default().to_owned();
        }
        println!("model calls: {}", calls.iter().map(|c| format!("{}({})", c.name, c.arguments)).collect::<Vec<_>>().join(", "));

        // The same calls in Anthropic's shape (`tool_use` blocks), and back: nothing lost either way.
        let back = anthropic::parse_tool_calls(&anthropic::assistant_message(&calls))?;
        assert!(back.iter().zip(&calls).all(|(a, b)| (&a.call_id, &a.name, &a.arguments) == (&b.call_id, &b.name, &b.arguments)));

        // Each call gets its own signal; Esc cancels the scan once it is running.
        let esc = CancellationToken::new();
        let calls: Vec<_> = calls.into_iter().map(|c| if c.name == "scan" { c.with_signal(esc.clone()) } else { c }).collect();
        let watch = async {
            while !rt.in_flight().iter().any(|body| body.tool == "scan") {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            println!("user presses Esc: cancelling the scan");
            esc.cancel();
        };
        let has_scan = calls.iter().any(|c| c.name == "scan");
        let results = if has_scan {
            tokio::join!(turns.execute(calls), watch).0
        } else {
            turns.execute(calls).await
        };
        for (id, result) in &results.results {
            println!("  {id}: {} [{}]", result.text(), result.error_code().map_or(if result.is_error() { "failed" } else { "ok" }, |c| c.as_str()));
        }
        let answer = openai::tool_messages(&results.results, &ImageSource::from_attachment);
        messages.extend(answer);
        println!("as Anthropic's tool_result message: {}", anthropic::user_message(&results.results, &ImageSource::from_attachment));
        all_results.extend(results.results);
    };
    println!("model: {answer}");

    let code = |id: &str| all_results.iter().find(|(i, _)| i == id).and_then(|(_, r)| r.error_code().cloned());
    let text = |id: &str| all_results.iter().find(|(i, _)| i == id).map(|(_, r)| r.text()).unwrap_or_default();
    assert_eq!(text("call_1"), r#"{"city":"Oslo","celsius":4.5}"#);
    assert_eq!(code("call_3"), Some(ErrorCode::ABORTED), "the scan was cancelled mid-turn");
    assert_eq!(text("call_4"), "Error: deleting outside /tmp is not allowed");
    assert_eq!(code("call_5"), Some(ErrorCode::INVALID_ARGS));
    assert_eq!(text("call_5"), r#"Error: invalid arguments: missing required property "city""#);
    assert_eq!(messages.len(), 1 + (1 + 4) + (1 + 1) + 1, "user, two answered turns, the final answer");
    assert!(rt.in_flight().is_empty());
    Ok(())
}
