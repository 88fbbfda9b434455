//! The `dsh-sdk` command: prints the renderer's text plus one newline for a tool list or an MCP
//! `tools/list` result (file or stdin), and exits 2 naming the tool and JSON path on bad input.
//!
//! Spec: SDK-001, SDK-003 (the text as rendered).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use dsh_tools::sdk::{SdkToolSchema, render_tools_sdk, render_tools_sdk_py};
use serde_json::json;

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-sdk"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("dsh-sdk: {e}"));
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin.as_bytes());
    }
    child.wait_with_output().unwrap_or_else(|e| panic!("dsh-sdk: {e}"))
}

#[test]
fn mcp_tools_list_from_stdin() {
    let mcp = json!({"tools": [
        {"name": "b-tool", "description": "B", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
        {"name": "a", "inputSchema": {"type": "object"}, "outputSchema": {"type": "string"}},
    ]});
    let expected = vec![
        SdkToolSchema { name: "b-tool".into(), description: Some("B".into()), parameters: mcp["tools"][0]["inputSchema"].clone(), output: None },
        SdkToolSchema { name: "a".into(), description: None, parameters: json!({"type": "object"}), output: Some(json!({"type": "string"})) },
    ];
    for (language, text) in [("typescript", render_tools_sdk(&expected)), ("python", render_tools_sdk_py(&expected))] {
        let out = run(&["--language", language, "-"], &mcp.to_string());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{text}\n"));
    }
}

#[test]
fn bad_input_names_tool_and_path() {
    let out = run(&["--language", "python", "-"], r#"[{"name": "ok", "parameters": {}}, {"name": "broken"}]"#);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"broken\"") && stderr.contains("$[1].parameters"), "{stderr}");
    let out = run(&["--language", "typescript", "-"], r#"{"tools": [{"name": 7, "inputSchema": {}}]}"#);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("$.tools[0].name"));
    assert_eq!(run(&["--language", "cobol", "-"], "[]").status.code(), Some(2));
    assert_eq!(run(&["--language", "python", "-"], "not json").status.code(), Some(2));
}
