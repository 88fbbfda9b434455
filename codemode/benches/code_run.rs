//! `code_run` at scale (issue 39 item 2): a trivial program (`return 1`) through dsh-codemode's `code_run`
//! with 10, 1,000 and 10,000 tools the calling agent sees, on the TypeScript and the Python runtimes:
//! `codemode_code_run_trivial_<language>_<n>_tools_per_run` (7 rounds of 5 runs, 3 of 3 for 10,000; the
//! median µs per run). What a run costs beyond the program is its bindings' set-up: with the names kept
//! per registry generation it should not grow with the number of tools.
//!
//! Arguments that do not start with `--` filter the figures by substring
//! (`cargo bench -p dsh-codemode --bench code_run -- python`).
//!
//! Spec: none (performance anchors, see DESIGN.md).

#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Instant;

use dsh_codemode::{Codemode, CodemodeConfig};
use dsh_tools::code::python::PythonRuntime;
use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::code::{CodeRuntime, CodeRuntimeLimits};
use dsh_tools::{OutputDeclaration, Parameters, ScopeKey, ToolDefinition, ToolExecutionInput, ToolRuntime, ToolsConfig};
use serde_json::json;

/// A tool of the scale bench's shape (a DSL `path`, `limit`, `mode` enum; an object output).
fn scale_tool(k: usize) -> ToolDefinition {
    ToolDefinition::new(
        format!("tool_{k}"),
        format!("Tool number {k} does things."),
        Parameters::Dsl(json!({
            "path": { "type": "string", "required": true, "description": "a path" },
            "limit": { "type": "integer" },
            "mode": { "type": "string", "enum": ["a", "b", "c"] },
        })),
        OutputDeclaration {
            schema: json!({ "type": "object", "additionalProperties": false, "properties": { "ok": { "type": "boolean", "required": true } } }),
            render: Arc::new(|_, v| Ok(vec![json!({ "type": "text", "text": v.to_string() })])),
            presentation_meta: None,
        },
        Arc::new(|_, _| Box::pin(async { Ok(json!({ "ok": true })) })),
    )
}

fn wanted(name: &str) -> bool {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

fn report(figure: &str, n: usize, mut samples: Vec<f64>) {
    samples.sort_by(f64::total_cmp);
    let median = samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN);
    println!("{}", json!({"figure": figure, "n": n, "median_us": (median * 1000.0).round() / 1000.0}));
}

fn main() {
    let Ok(tokio) = tokio::runtime::Builder::new_current_thread().thread_stack_size(64 << 20).enable_all().build() else {
        return;
    };
    for n in [10usize, 1_000, 10_000] {
        for language in ["typescript", "python"] {
            let figure = format!("codemode_code_run_trivial_{language}_{n}_tools_per_run");
            if !wanted(&figure) {
                continue;
            }
            let code: Arc<dyn CodeRuntime> = match language {
                "typescript" => match TypeScriptRuntime::new(CodeRuntimeLimits::default()) {
                    Ok(runtime) => Arc::new(runtime),
                    Err(e) => return println!("{}", json!({ "figure": "code_run_error", "error": e.message })),
                },
                _ => match PythonRuntime::new(CodeRuntimeLimits::default()) {
                    Ok(runtime) => Arc::new(runtime),
                    Err(e) => return println!("{}", json!({ "figure": "code_run_error", "error": e.message })),
                },
            };
            let runtime = ToolRuntime::new(ToolsConfig::default());
            let preset = runtime.open_scope("P", None);
            let agent = ScopeKey::child("A", &preset);
            let _tools: Vec<_> = (0..n).filter_map(|k| runtime.register(scale_tool(k), None).ok()).collect();
            let Ok(_plugin) = Codemode::apply(&runtime, Some(&preset), CodemodeConfig::new(code)) else { return };
            let (rounds, runs) = if n >= 10_000 { (3, 3) } else { (7, 5) };
            let once = || {
                let input = ToolExecutionInput::new("call_code_run", "code_run", json!({ "code": "return 1", "description": "bench" })).with_agent(&agent);
                let result = tokio.block_on(runtime.execute(input));
                if result.to_json()["isError"] != json!(false) {
                    println!("{}", json!({ "figure": "code_run_error", "error": result.to_json() }));
                    return false;
                }
                true
            };
            if !once() {
                return;
            }
            let mut samples = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                let t0 = Instant::now();
                for _ in 0..runs {
                    if !once() {
                        return;
                    }
                }
                samples.push(t0.elapsed().as_secs_f64() * 1e6 / runs as f64);
            }
            report(&figure, runs, samples);
        }
    }
}
