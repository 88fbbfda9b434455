//! What the benchmarks share: the figure line they print (`{"figure", "n", "median_us"}`, the shape
//! `shared/tools/bench/upstream-bench.mjs` prints) and upstream's bench `echo` tool (a concurrency-safe
//! string echo).
//!
//! Spec: none (performance anchors, see DESIGN.md).

use std::sync::Arc;

use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition};
use serde_json::{Value, json};

/// Print one figure: the median of `samples` (µs per call or run), `n` calls or runs per sample.
pub fn report(figure: &str, n: usize, mut samples: Vec<f64>) {
    samples.sort_by(f64::total_cmp);
    let median = samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN);
    println!("{}", json!({"figure": figure, "n": n, "median_us": (median * 1000.0).round() / 1000.0}));
}

/// Upstream's bench tool: `echo({ text })` returns `text` (or `""`), concurrency-safe.
pub fn echo() -> ToolDefinition {
    let mut def = ToolDefinition::new(
        "echo",
        "echo",
        Parameters::Dsl(json!({"text": {"type": "string"}})),
        OutputDeclaration {
            schema: json!({"type": "string"}),
            render: Arc::new(|_, v| Ok(vec![json!({"type": "text", "text": v})])),
            presentation_meta: None,
        },
        Arc::new(|args, _| {
            Box::pin(async move { Ok(args.get("text").cloned().unwrap_or_else(|| Value::String(String::new()))) })
        }),
    );
    def.is_concurrency_safe = Some(Arc::new(|_| Ok(true)));
    def
}
