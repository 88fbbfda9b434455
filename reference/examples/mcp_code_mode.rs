//! Code Mode over a real MCP server: spawn an MCP server over stdio with `rmcp` (the official Rust SDK),
//! import its `tools/list` with `dsh_tools::mcp::import_tools_list` (schemas lowered into the registry's
//! subset, a report of every change), register the tools in a Code Mode runtime with the TypeScript
//! code runtime mounted, and run one `run_code` program that calls them. Exits non-zero if anything
//! fails or the program's result is not the expected one, so CI can run it.
//!
//! The server is the `mcp_server` example by default (built beside this one:
//! `cargo build -p dsh-tools --example mcp_server && cargo run -p dsh-tools --example mcp_code_mode`);
//! pass another server's command line as arguments to use that instead.

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;

use dsh_tools::code::CodeRuntimeLimits;
use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::mcp::{McpCaller, import_tools_list};
use dsh_tools::{ToolExecutionInput, ToolFailure, ToolMode, ToolRuntime, ToolsConfig};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// The program the "model" writes: every tool once, and one call that fails.
const PROGRAM: &str = r#"
const total = await tools.add({ a: 2, b: 40 });
const stats = await tools.word_stats({ text: "code mode calls mcp" });
const loud = await tools.shout({ text: "done", marks: 3 });
let refused = "";
try { await tools.shout({ text: "" }); } catch (error) { refused = error.message; }
console.log("sum", total.sum);
return { sum: total.sum, words: stats.words, loud, refused };
"#;

fn server_command() -> Result<tokio::process::Command, Box<dyn Error>> {
    let mut args = std::env::args_os().skip(1);
    if let Some(program) = args.next() {
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        return Ok(command);
    }
    let here = std::env::current_exe()?;
    let server = here.with_file_name(format!("mcp_server{}", std::env::consts::EXE_SUFFIX));
    if !server.exists() {
        return Err(format!("{} not found: build it first (cargo build -p dsh-tools --example mcp_server)", server.display()).into());
    }
    Ok(tokio::process::Command::new(server))
}

async fn run() -> Result<(), Box<dyn Error>> {
    let client = ().serve(TokioChildProcess::new(server_command()?)?).await?;
    let tools = client.list_all_tools().await?;
    let list = json!({ "tools": serde_json::to_value(&tools)? });

    let peer = client.peer().clone();
    let caller: McpCaller = Arc::new(move |name, arguments, _ctx| {
        let peer = peer.clone();
        Box::pin(async move {
            let Value::Object(arguments) = arguments else {
                return Err(ToolFailure::message("MCP tool arguments must be an object"));
            };
            let params = CallToolRequestParams::new(name).with_arguments(arguments);
            let result = peer.call_tool(params).await.map_err(|e| ToolFailure::message(format!("MCP call failed: {e}")))?;
            serde_json::to_value(result).map_err(|e| ToolFailure::message(e.to_string()))
        })
    });
    let import = import_tools_list(&list, caller)?;
    for report in &import.reports {
        println!("imported `{}` ({} change(s))", report.tool, report.changes.len());
        for change in &report.changes {
            println!("  {change}");
        }
    }

    let runtime = ToolRuntime::new(ToolsConfig::with_mode(ToolMode::Code));
    let mut registrations = Vec::new();
    for definition in import.definitions {
        registrations.push(runtime.register(definition, None)?);
    }
    let _mounted = runtime.mount_code_runtime(Arc::new(TypeScriptRuntime::new(CodeRuntimeLimits::default())?));
    let visible: Vec<String> = runtime.try_schemas(None)?.into_iter().map(|s| s.name).collect();
    println!("model-visible tools: {visible:?}");

    let input = ToolExecutionInput::new("run-1", "run_code", json!({ "code": PROGRAM, "description": "call the MCP tools" }));
    let result = runtime.execute(input).await.to_json();
    println!("run_code result: {result}");
    let expected = json!({ "logs": ["sum 42"], "result": { "sum": 42, "words": 4, "loud": "DONE!!!", "refused": "nothing to shout" } });
    if result["isError"] != json!(false) || result["value"] != expected {
        return Err(format!("unexpected run_code result; expected value {expected}").into());
    }
    drop(registrations);
    client.cancel().await?;
    println!("ok");
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    // A hung server or program fails the run instead of hanging CI.
    match tokio::time::timeout(std::time::Duration::from_secs(60), run()).await {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(error)) => {
            eprintln!("mcp_code_mode: {error}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("mcp_code_mode: no result within 60 s");
            ExitCode::FAILURE
        }
    }
}
