//! Code Mode with the TypeScript runtime: the model sees one tool, `run_code`, plus a TypeScript SDK of
//! the real tools in its system prompt, and writes a program that calls them — here two lookups in
//! parallel with `Promise.all`, and a failing call caught as `ToolCallError`.
//!
//! Run: `cargo run -p dsh-tools --example code_mode_typescript`

use std::time::Duration;

use dsh_tools::code::CodeRuntimeLimits;
use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::typed::{JsonSchema, TypedTool};
use dsh_tools::{PromptConfig, SystemPrompt, ToolExecutionInput, ToolFailure, ToolMode, ToolRuntime, ToolsConfig};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::Arc;

#[derive(Deserialize, JsonSchema)]
struct IssueQuery {
    /// The issue number.
    number: u32,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Issue {
    number: u32,
    title: String,
    open: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = SystemPrompt::new(PromptConfig::default())?;
    let rt = ToolRuntime::try_with_prompt(ToolsConfig::with_mode(ToolMode::Code), &prompt)?;
    let limits = CodeRuntimeLimits::default().with_compute(Duration::from_secs(5)).with_max_wall(Duration::from_secs(30));
    let _runtime = rt.mount_code_runtime(Arc::new(TypeScriptRuntime::new(limits)?));

    let get_issue = TypedTool::new("get_issue", "Fetch one issue by number", |q: IssueQuery, _ctx| async move {
        match q.number {
            404 => Err(ToolFailure::message("issue 404 does not exist")),
            n => Ok(Issue { number: n, title: format!("Issue #{n}"), open: n % 2 == 0 }),
        }
    })
    .concurrency_safe(true)
    .build()?;
    let _get_issue = rt.register(get_issue, None)?;

    // What the model is given: the tool list (only `run_code`) and the prompt text with the SDK.
    let assembly = prompt.assemble(None)?;
    let tools: Vec<&str> = assembly.tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools shown to the model: {tools:?}");
    let text = assembly.render();
    let sdk = text.find("```ts").map_or("", |at| &text[at..]);
    println!("SDK excerpt:\n{}\n", sdk.lines().take(20).collect::<Vec<_>>().join("\n"));

    // What the model might write.
    let program = r#"
        const [a, b] = await Promise.all([tools.get_issue({ number: 7 }), tools.get_issue({ number: 8 })]);
        let missing = "";
        try {
            await tools.get_issue({ number: 404 });
        } catch (e) {
            if (e instanceof ToolCallError) missing = `${e.toolName}: ${e.message}`;
        }
        console.log("fetched", a.number, b.number);
        return { open: [a, b].filter((i) => i.open).map((i) => i.title), missing };
    "#;
    let call = ToolExecutionInput::new("call-1", "run_code", json!({ "code": program, "description": "Fetch two issues" }));
    let result = rt.execute(call).await;
    println!("run_code result:\n{}", result.text());
    assert!(!result.is_error(), "{}", result.to_json());
    assert!(result.text().contains("Issue #8") && result.text().contains("issue 404 does not exist"));

    // Calling a real tool directly is refused in Code Mode: the model must go through `run_code`.
    let direct = rt.execute(ToolExecutionInput::new("call-2", "get_issue", json!({ "number": 1 }))).await;
    println!("direct call: {}", direct.text());
    assert!(direct.is_error());
    Ok(())
}
