//! Code Mode at scale: the cost of assembling the Code Mode system prompt and of a trivial `run_code`
//! (TypeScript runtime) with 10, 1,000 and 10,000 registered tools, the figures issue 39 asks for, with
//! the tools and names of `benches/upstream-bench.mjs` § 5 so both sides compare in one run:
//! `code_prompt_assemble_<n>_tools_total` (one `SystemPrompt::assemble` in Code Mode: the SDK section
//! for every tool; the median of 7 rounds, 3 for 10,000; the SDK text is cached for the registry's
//! generation, so this is the steady state), `code_prompt_assemble_<n>_tools_after_change_total` (ours
//! only: the same after a tool was registered and dropped, so the text is made again, from the members
//! kept per registered tool plus the one new tool's — upstream renders on every assembly),
//! `code_prompt_bytes_<n>` (its rendered size)
//! and `run_code_trivial_<n>_tools_per_run` (`return 1`; 7 rounds of 5 runs, 3 of 3 for 10,000);
//! `run_code_trivial_python_<n>_tools_per_run` (ours only: upstream has no Python runtime) is the same
//! program on the Python runtime.
//! `code_prompt_assemble_python_<n>_tools_total` and `..._after_change_total` (ours only: rc.8's bench
//! assembles the TypeScript SDK) are the prompt with the Python runtime mounted; after a change its SDK
//! text is rendered whole (class names are allocated across tools), from the registry's schemas borrowed.
//! `run_code_floor_typescript_<n>_bindings_per_run` (ours only) runs the same program straight through
//! `CodeRuntime::run` with `n` no-op bindings (built once, shared by the runs), no pipeline: what the
//! runtime's side of the bindings costs.
//! Each tool is upstream's bench shape: a DSL `path` (required), `limit`, `mode` enum and `opts` object,
//! with an object output.
//!
//! Arguments that do not start with `--` filter the figures by substring
//! (`cargo bench -p dsh-tools --bench scale -- run_code`).
//!
//! Spec: none (performance anchors, see DESIGN.md).

#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Instant;

use dsh_tools::code::{BindingFn, CodeBindingNamespace, CodeBindings, CodeRunRequest, CodeRuntime, CodeRuntimeLimits, RunSignal};
use dsh_tools::code::python::PythonRuntime;
use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::{
    OutputDeclaration, Parameters, PromptConfig, SystemPrompt, ToolDefinition, ToolExecutionInput, ToolMode, ToolRuntime,
    ToolsConfig,
};
use serde_json::json;

#[allow(dead_code)] // `echo` is the other benches'
mod common;

use common::report;

/// Upstream bench § 5's tool number `k`.
fn scale_tool(k: usize) -> ToolDefinition {
    ToolDefinition::new(
        format!("tool_{k}"),
        format!("Tool number {k} does things."),
        Parameters::Dsl(json!({
            "path": { "type": "string", "required": true, "description": "a path" },
            "limit": { "type": "integer" },
            "mode": { "type": "string", "enum": ["a", "b", "c"] },
            "opts": { "type": "object", "additionalProperties": false, "properties": { "deep": { "type": "boolean" }, "tags": { "type": "array", "items": { "type": "string" } } } },
        })),
        OutputDeclaration {
            schema: json!({ "type": "object", "additionalProperties": false, "properties": { "ok": { "type": "boolean", "required": true }, "lines": { "type": "array", "items": { "type": "string" } } } }),
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

fn timed(rounds: usize, n: usize, mut once: impl FnMut() -> bool) -> Option<Vec<f64>> {
    if !once() {
        return None;
    }
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t0 = Instant::now();
        for _ in 0..n {
            if !once() {
                return None;
            }
        }
        samples.push(t0.elapsed().as_secs_f64() * 1e6 / n as f64);
    }
    Some(samples)
}

fn main() {
    let Ok(tokio) = tokio::runtime::Builder::new_current_thread().thread_stack_size(64 << 20).enable_all().build() else {
        return;
    };
    for n in [10usize, 1_000, 10_000] {
        let Ok(prompt) = SystemPrompt::new(PromptConfig::default()) else { return };
        let Ok(rt) = ToolRuntime::try_with_prompt(ToolsConfig::with_mode(ToolMode::Code), &prompt) else { return };
        let runtime = match TypeScriptRuntime::new(CodeRuntimeLimits::default()) {
            Ok(runtime) => runtime,
            Err(e) => return println!("{}", json!({ "figure": "run_code_error", "error": e.message })),
        };
        let _mounted = rt.mount_code_runtime(Arc::new(runtime));
        let _tools: Vec<_> = (0..n).filter_map(|k| rt.register(scale_tool(k), None).ok()).collect();
        let big = n >= 10_000;

        let figure = format!("code_prompt_assemble_{n}_tools_total");
        if wanted(&figure) {
            let mut bytes = 0;
            let samples = timed(if big { 3 } else { 7 }, 1, || match prompt.assemble(None) {
                Ok(assembly) => {
                    bytes = assembly.render().len();
                    true
                }
                Err(e) => {
                    println!("{}", json!({ "figure": "code_prompt_error", "error": e.to_string() }));
                    false
                }
            });
            if let Some(samples) = samples {
                report(&figure, 1, samples);
                println!("{}", json!({ "figure": format!("code_prompt_bytes_{n}"), "bytes": bytes }));
            }
        }

        // What that change costs alone (ours only), to read the figure below by.
        let figure = format!("registry_register_drop_{n}_tools_total");
        if wanted(&figure)
            && let Some(samples) = timed(if big { 3 } else { 7 }, 1, || rt.register(scale_tool(n), None).is_ok())
        {
            report(&figure, 1, samples);
        }

        // The same after a registry change each time (a tool registered and dropped first): the SDK
        // text is rendered again, as on the first assembly after any change.
        let figure = format!("code_prompt_assemble_{n}_tools_after_change_total");
        if wanted(&figure) {
            let samples = timed(if big { 3 } else { 7 }, 1, || {
                drop(rt.register(scale_tool(n), None));
                prompt.assemble(None).map(|assembly| !assembly.render().is_empty()).unwrap_or(false)
            });
            if let Some(samples) = samples {
                report(&figure, 1, samples);
            }
        }

        let figure = format!("run_code_floor_typescript_{n}_bindings_per_run");
        if wanted(&figure)
            && let Ok(runtime) = TypeScriptRuntime::new(CodeRuntimeLimits::default())
        {
            let noop: BindingFn = Arc::new(|_| Box::pin(async { Ok(json!(null)) }));
            // Built once and shared, as the run_code bridge shares its names across runs.
            let functions: CodeBindings = (0..n).map(|k| (format!("tool_{k}"), Arc::clone(&noop))).collect();
            let (rounds, runs) = if big { (3, 3) } else { (7, 5) };
            let samples = timed(rounds, runs, || {
                let namespace = CodeBindingNamespace { global: "tools".into(), functions: functions.clone(), error_class: None };
                let request = CodeRunRequest { program: "return 1".into(), bindings: vec![namespace], signal: RunSignal::new(), state_owner: None };
                matches!(tokio.block_on(runtime.run(request)), Ok(result) if result.error.is_none())
            });
            if let Some(samples) = samples {
                report(&figure, runs, samples);
            }
        }

        let figure = format!("run_code_trivial_{n}_tools_per_run");
        if wanted(&figure) {
            trivial_runs(&tokio, &rt, &figure, "return 1", big);
        }

        // The Python SDK text (ours only: rc.8 renders it, but its bench assembles the TypeScript one):
        // warm, and after a change, where it is rendered whole (its class names are allocated across tools).
        let figure = format!("code_prompt_assemble_python_{n}_tools_after_change_total");
        if (wanted(&figure) || wanted(&format!("code_prompt_assemble_python_{n}_tools_total")))
            && let Ok(runtime) = PythonRuntime::new(CodeRuntimeLimits::default())
            && let Ok(prompt) = SystemPrompt::new(PromptConfig::default())
            && let Ok(rt) = ToolRuntime::try_with_prompt(ToolsConfig::with_mode(ToolMode::Code), &prompt)
        {
            let _mounted = rt.mount_code_runtime(Arc::new(runtime));
            let _tools: Vec<_> = (0..n).filter_map(|k| rt.register(scale_tool(k), None).ok()).collect();
            let rounds = if big { 3 } else { 7 };
            let assemble = || prompt.assemble(None).map(|assembly| !assembly.render().is_empty()).unwrap_or(false);
            if let Some(samples) = timed(rounds, 1, assemble) {
                report(&format!("code_prompt_assemble_python_{n}_tools_total"), 1, samples);
            }
            let samples = timed(rounds, 1, || {
                drop(rt.register(scale_tool(n), None));
                assemble()
            });
            if let Some(samples) = samples {
                report(&figure, 1, samples);
            }
        }

        // The same with the Python runtime (ours only: upstream has no Python runtime).
        let figure = format!("run_code_trivial_python_{n}_tools_per_run");
        if wanted(&figure) {
            let runtime = match PythonRuntime::new(CodeRuntimeLimits::default()) {
                Ok(runtime) => runtime,
                Err(e) => return println!("{}", json!({ "figure": "run_code_error", "error": e.message })),
            };
            let Ok(rt) = ToolRuntime::try_new(ToolsConfig::with_mode(ToolMode::Code)) else { return };
            let _mounted = rt.mount_code_runtime(Arc::new(runtime));
            let _tools: Vec<_> = (0..n).filter_map(|k| rt.register(scale_tool(k), None).ok()).collect();
            trivial_runs(&tokio, &rt, &figure, "return 1", big);
        }
    }
}

/// Report `figure`: `program` through `run_code` on `rt` (7 rounds of 5 runs, 3 of 3 when `big`).
fn trivial_runs(tokio: &tokio::runtime::Runtime, rt: &ToolRuntime, figure: &str, program: &str, big: bool) {
    let mut next = 0;
    let (rounds, runs) = if big { (3, 3) } else { (7, 5) };
    let samples = timed(rounds, runs, || {
        next += 1;
        let input = ToolExecutionInput::new(format!("r{next}"), "run_code", json!({ "code": program, "description": "bench" }));
        let result = tokio.block_on(rt.execute(input));
        if result.is_error() {
            println!("{}", json!({ "figure": "run_code_error", "error": result.to_json() }));
        }
        !result.is_error()
    });
    if let Some(samples) = samples {
        report(figure, runs, samples);
    }
}
