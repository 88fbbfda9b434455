//! One native agent step: three typed tools, a policy that denies one call, a guard, a timing wrapper,
//! a post-execute rewrite, a result log, and one model turn of seven calls run by the `TurnExecutor`:
//! two read-only calls overlapping, a denial, a guard, bad arguments, and a call cancelled mid-run whose
//! body stops with `ctx.until_cancelled(..)?` (the coded `ABORTED` result).
//!
//! Run: `cargo run -p dsh-tools --example native_step`

use std::time::{Duration, Instant};

use dsh_tools::turn::TurnExecutor;
use dsh_tools::typed::{JsonSchema, TypedTool, tool};
use dsh_tools::{
    CancellationToken, ErrorCode, PostToolDecision, PreToolDecision, ToolExecutionInput,
    ToolRuntime, content, execute_wrapper_fn, guard_fn, post_execute_fn, pre_execute_fn, result_observer_fn,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct WeatherArgs {
    /// City name, e.g. "Oslo".
    city: String,
    /// Days to forecast; 1 when absent.
    days: Option<u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Forecast {
    city: String,
    highs: Vec<f64>,
}

#[derive(Deserialize, JsonSchema)]
struct PathArgs {
    /// The file to act on.
    path: String,
}

#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// How long to work, in milliseconds.
    millis: u64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rt = ToolRuntime::new(Default::default());

    // Tools. Registrations unregister when dropped: keep them for as long as the tools should exist.
    let weather = TypedTool::new("weather", "Daily temperature highs for a city", |args: WeatherArgs, _ctx| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(Forecast { city: args.city, highs: vec![21.5; args.days.unwrap_or(1) as usize] })
    })
    .concurrency_safe(true)
    .render(|_, f: &Forecast| vec![content::text(format!("{}: highs {:?} °C", f.city, f.highs))])
    .build()?;
    let delete = tool("delete_file", "Delete a file", |args: PathArgs, _| async move {
        Ok(format!("deleted {}", args.path))
    })?;
    let slow = tool("slow_scan", "A long scan that honours cancellation", |args: SlowArgs, ctx| async move {
        // Cancelled: stop early. `until_cancelled` drops the work and `?` returns `ToolFailure::aborted()`,
        // so the result is the coded `ABORTED` (a plain `Err` would be kept as an uncoded failure).
        ctx.until_cancelled(tokio::time::sleep(Duration::from_millis(args.millis))).await?;
        Ok("scan complete".to_owned())
    })?;
    let _tools = [rt.register(weather, None)?, rt.register(delete, None)?, rt.register(slow, None)?];

    // Policy: deny deletions outside /tmp before anything runs.
    let _policy = rt.on_pre_execute(
        None,
        pre_execute_fn(|exec, next| {
            Box::pin(async move {
                let outside_tmp = exec.arguments["path"].as_str().is_some_and(|p| !p.starts_with("/tmp/"));
                if exec.name == "delete_file" && outside_tmp {
                    return Ok(PreToolDecision::deny("deleting outside /tmp is not allowed"));
                }
                next.run().await
            })
        }),
    );
    // A guard: synchronous, after the policy; `Some(reason)` denies.
    let _guard = rt.guard(None, guard_fn(|exec| (exec.arguments["city"] == "Atlantis").then(|| "no such city".to_owned())));
    // A wrapper around the body: time every call that reaches it.
    let _timing = rt.on_execute(
        None,
        execute_wrapper_fn(|exec, next| {
            Box::pin(async move {
                let started = Instant::now();
                let outcome = next.run().await;
                eprintln!("  [timing] {} took {:?}", exec.execution().name, started.elapsed());
                outcome
            })
        }),
    );
    // A post-execute rewrite: add a hint to every forecast the model sees.
    let _hint = rt.on_post_execute(
        None,
        post_execute_fn(|exec, result, next| {
            Box::pin(async move {
                if exec.name == "weather" && !result.is_error() {
                    let text = format!("{} (forecasts beyond 3 days are unreliable)", result.text());
                    return Ok(PostToolDecision::replace_content(vec![content::text(text)]));
                }
                next.run().await
            })
        }),
    );
    let _log = rt.on_result(result_observer_fn(|exec, result| {
        eprintln!("  [result] {} {} -> {}", exec.call_id, exec.name, if result.is_error() { "error" } else { "ok" });
    }));

    // One model turn, in model order. The turn executor overlaps the concurrency-safe calls (the two
    // forecasts), runs every other call alone as a barrier, applies policy in model order, and returns
    // one result per call in model order. The slow scan gets its own signal; Esc cancels it mid-run
    // (never drop the `execute` future to stop a call).
    let esc = CancellationToken::new();
    let calls = vec![
        ToolExecutionInput::new("call-1", "weather", json!({ "city": "Oslo", "days": 2 })),
        ToolExecutionInput::new("call-2", "weather", json!({ "city": "Rome" })),
        ToolExecutionInput::new("call-3", "delete_file", json!({ "path": "/etc/passwd" })),
        ToolExecutionInput::new("call-4", "weather", json!({ "city": "Atlantis" })),
        ToolExecutionInput::new("call-5", "delete_file", json!({ "path": "/tmp/x" })),
        ToolExecutionInput::new("call-6", "weather", json!({ "town": "Oslo" })),
        ToolExecutionInput::new("call-7", "slow_scan", json!({ "millis": 10_000 })).with_signal(esc.clone()),
    ];
    let started = Instant::now();
    let turn = TurnExecutor::new(&rt).max_parallel(4);
    let (turn, ()) = tokio::join!(turn.execute(calls), async {
        tokio::time::sleep(Duration::from_millis(300)).await; // the user presses Esc during the scan
        esc.cancel();
    });
    println!("turn of {} calls in {:?}", turn.results.len(), started.elapsed());
    for (id, result) in &turn.results {
        let outcome = match (result.is_error(), result.error_code()) {
            (false, _) => "ok",
            (true, Some(code)) => code.as_str(),
            (true, None) => "failed, uncoded",
        };
        println!("{id}: {} ({outcome})", result.text());
    }
    let text = |i: usize| turn.results[i].1.text();
    assert_eq!(text(0), "Oslo: highs [21.5, 21.5] °C (forecasts beyond 3 days are unreliable)");
    // A denial and a guard: failures are results the model reads, not Rust errors.
    assert_eq!(text(2), "Error: deleting outside /tmp is not allowed");
    assert_eq!(text(3), "Error: no such city");
    assert_eq!(text(4), "deleted /tmp/x");
    // Bad arguments never reach the body.
    assert_eq!(turn.results[5].1.error_code(), Some(&ErrorCode::INVALID_ARGS));
    assert_eq!(text(5), r#"Error: invalid arguments: missing required property "city""#);
    assert_eq!(turn.results[6].1.error_code(), Some(&ErrorCode::ABORTED));
    assert!(started.elapsed() < Duration::from_secs(5), "the scan stopped when cancelled");
    Ok(())
}
