//! Code Mode with the Python runtime (needs `python3` on `PATH`): the same shape as
//! `code_mode_typescript`, with the model writing Python — `asyncio.gather` for parallel calls and
//! `except ToolCallError` for a failed one. The tools are typed; one is the one-liner form.
//!
//! Run: `cargo run -p dsh-tools --example code_mode_python`

use std::sync::Arc;

use dsh_tools::code::CodeRuntimeLimits;
use dsh_tools::code::python::PythonRuntime;
use dsh_tools::typed::{JsonSchema, tool};
use dsh_tools::{PromptConfig, SystemPrompt, ToolExecutionInput, ToolFailure, ToolMode, ToolRuntime, ToolsConfig};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)] // closes the object: the SDK then lists exactly these keys
struct Celsius {
    /// Temperature in degrees Celsius.
    celsius: f64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = SystemPrompt::new(PromptConfig::default())?;
    let rt = ToolRuntime::try_with_prompt(ToolsConfig::with_mode(ToolMode::Code), &prompt)?;
    let _runtime = rt.mount_code_runtime(Arc::new(PythonRuntime::new(CodeRuntimeLimits::default())?));

    let to_fahrenheit = tool("to_fahrenheit", "Convert Celsius to Fahrenheit", |c: Celsius, _| async move {
        if c.celsius < -273.15 {
            return Err(ToolFailure::message("below absolute zero"));
        }
        Ok(c.celsius * 9.0 / 5.0 + 32.0)
    })?;
    let _to_fahrenheit = rt.register(to_fahrenheit.concurrency_safe(true), None)?;

    let text = prompt.assemble(None)?.render();
    let sdk = text.find("```py").map_or("", |at| &text[at..]);
    println!("SDK excerpt:\n{}\n", sdk.lines().take(16).collect::<Vec<_>>().join("\n"));

    let program = r#"
import asyncio
warm, hot = await asyncio.gather(tools.to_fahrenheit({"celsius": 20}), tools.to_fahrenheit({"celsius": 40}))
try:
    await tools.to_fahrenheit({"celsius": -300})
    problem = None
except ToolCallError as e:
    problem = f"{e.toolName}: {e}"
print("converted two values")
return {"warm": warm, "hot": hot, "problem": problem}
"#;
    let call = ToolExecutionInput::new("call-1", "run_code", json!({ "code": program, "description": "Convert temperatures" }));
    let result = rt.execute(call).await;
    println!("run_code result:\n{}", result.text());
    assert!(!result.is_error(), "{}", result.to_json());
    assert!(result.text().contains("104") && result.text().contains("below absolute zero"));
    Ok(())
}
