//! SDK render benchmarks: the TypeScript and Python sections for 10, 100 and 1000 tools, built like
//! `toolSchemas(n)` of `shared/tools/bench/upstream-bench.mjs`; one JSON object per line,
//! `{"figure", "n", "median_us"}`, with that script's figure names.

#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use dsh_tools::sdk::{SdkToolSchema, render_tools_sdk, render_tools_sdk_py};
use serde_json::json;

fn tool_schemas(n: usize) -> Vec<SdkToolSchema> {
    (0..n)
        .map(|k| SdkToolSchema {
            name: format!("tool_{k}"),
            description: Some(format!("Tool number {k} does things.")),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "a path"},
                "limit": {"type": "integer"},
                "mode": {"type": "string", "enum": ["a", "b", "c"]},
                "opts": {"type": "object", "additionalProperties": false, "properties": {
                    "deep": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}}}}},
                "required": ["path"]}),
            output: Some(json!({"type": "object", "properties": {
                "ok": {"type": "boolean"}, "lines": {"type": "array", "items": {"type": "string"}}},
                "required": ["ok"], "additionalProperties": false})),
        })
        .collect()
}

/// Median of `samples` timed runs of `f` (after one warm-up), in microseconds.
fn median_us(samples: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn report(figure: &str, n: usize, median: f64) {
    println!("{}", json!({"figure": figure, "n": n, "median_us": (median * 1000.0).round() / 1000.0}));
}

fn main() {
    let sizes: Vec<usize> = match std::env::var("SDK_BENCH_SIZES") {
        Ok(list) => list.split(',').filter_map(|s| s.trim().parse().ok()).collect(),
        Err(_) => vec![10, 100, 1000],
    };
    for n in sizes {
        let tools = tool_schemas(n);
        let ts = median_us(21, || {
            black_box(render_tools_sdk(black_box(&tools)));
        });
        report(&format!("sdk_ts_render_{n}_tools_total"), n, ts);
        let py = median_us(21, || {
            black_box(render_tools_sdk_py(black_box(&tools)));
        });
        report(&format!("sdk_py_render_{n}_tools_total"), n, py);
    }
}
