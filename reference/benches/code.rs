//! `run_code` benchmarks with the real code runtimes; one JSON object per line,
//! `{"figure", "n", "median_us"}`, with the figure names and programs of
//! `shared/tools/bench/upstream-bench.mjs` § 4 (a code-mode runtime with one concurrency-safe `echo`):
//! `run_code_trivial_per_run` (`return 1`; 9 rounds of 5 runs), `run_code_100_seq_calls_per_run` (100
//! awaited `tools.echo` calls in a loop; 5 rounds of 2) and `run_code_100_parallel_calls_per_run` (100
//! calls awaited together; 5 rounds of 2), for the TypeScript runtime, then the same programs in Python
//! with a `_python` suffix, and `run_code_python_floor_per_run` (ours only: an empty program through
//! `CodeRuntime::run` directly, no bindings and no tool pipeline — a fresh process's start-up and settlement
//! alone, so a regression in the fork server shows; 9 rounds of 10) — the runs contained as by default —
//! and `run_code_python_floor_per_run_host_posture` (the same in `PythonIsolation::Host`: the difference is
//! what the boundary costs a run). One warm-up run each; the figure is
//! the median round's per-run µs. The
//! transport call is driven by a current-thread runtime on the bench thread (the runtimes run programs
//! on their own threads and processes).
//!
//! Arguments that do not start with `--` filter the figures by substring (`cargo bench --bench code --
//! seq_calls_per_run_python`). `--no-body-ceiling` runs the pipeline figures with the body ceiling off
//! (`ToolRuntime::set_body_ceiling(None)`, figures suffixed `_no_body_ceiling`): the ceiling clock's A/B in
//! one binary and one sitting.
//!
//! Spec: none (performance anchors, see DESIGN.md); the workloads exercise the RUN bridge rules.

#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Instant;

use dsh_tools::code::{CodeRunRequest, CodeRuntime, CodeRuntimeLimits, RunSignal};
use dsh_tools::code::python::{PythonIsolation, PythonRuntime};
use dsh_tools::code::typescript::TypeScriptRuntime;
use dsh_tools::{ToolExecutionInput, ToolMode, ToolRuntime, ToolsConfig};
use serde_json::json;

mod common;

use common::{echo, report};

struct Bench {
    tokio: tokio::runtime::Runtime,
    rt: ToolRuntime,
    next: usize,
}

impl Bench {
    /// One run; a failed run is reported once and makes the figure meaningless.
    fn run(&mut self, code: &str) -> bool {
        self.next += 1;
        let input = ToolExecutionInput::new(format!("r{}", self.next), "run_code", json!({"code": code, "description": "bench"}));
        let result = self.tokio.block_on(self.rt.execute(input));
        if result.is_error() {
            println!("{}", json!({"figure": "run_code_error", "error": result.to_json()}));
            return false;
        }
        true
    }

    fn figure(&mut self, figure: &str, code: &str, rounds: usize, n: usize) {
        if !wanted(figure) || !self.run(code) {
            return;
        }
        let mut samples = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let t0 = Instant::now();
            for _ in 0..n {
                if !self.run(code) {
                    return;
                }
            }
            samples.push(t0.elapsed().as_secs_f64() * 1e6 / n as f64);
        }
        report(figure, n, samples);
    }
}

fn bench(runtime: Arc<dyn CodeRuntime>, suffix: &str, programs: [&str; 3]) {
    let Ok(tokio) = tokio::runtime::Builder::new_current_thread().thread_stack_size(64 << 20).enable_all().build()
    else {
        return;
    };
    let rt = ToolRuntime::new(ToolsConfig::with_mode(ToolMode::Code));
    // `--no-body-ceiling`: the same figures without the body ceiling's clock (issue 39 item 4's A/B).
    let suffix = &if std::env::args().any(|a| a == "--no-body-ceiling") {
        rt.set_body_ceiling(None);
        format!("{suffix}_no_body_ceiling")
    } else {
        suffix.to_owned()
    };
    let _echo = rt.register(echo(), None);
    let _mounted = rt.mount_code_runtime(runtime);
    let mut bench = Bench { tokio, rt, next: 0 };
    let [trivial, seq, parallel] = programs;
    bench.figure(&format!("run_code_trivial_per_run{suffix}"), trivial, 9, 5);
    bench.figure(&format!("run_code_100_seq_calls_per_run{suffix}"), seq, 5, 2);
    bench.figure(&format!("run_code_100_parallel_calls_per_run{suffix}"), parallel, 5, 2);
}

/// The per-run floor: an empty program, straight to the runtime, reported as `figure`.
fn floor(runtime: &PythonRuntime, figure: &str) {
    if !wanted(figure) {
        return;
    }
    let Ok(tokio) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
    let once = || {
        let request = CodeRunRequest { program: String::new(), bindings: Vec::new(), signal: RunSignal::new(), state_owner: None };
        match tokio.block_on(runtime.run(request)) {
            Ok(result) if result.error.is_none() => true,
            Ok(result) => {
                println!("{}", json!({"figure": "run_code_error_python", "error": format!("{:?}", result.error)}));
                false
            }
            Err(e) => {
                println!("{}", json!({"figure": "run_code_error_python", "error": e.message}));
                false
            }
        }
    };
    if !once() {
        return;
    }
    let (rounds, n) = (9, 10);
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t0 = Instant::now();
        for _ in 0..n {
            if !once() {
                return;
            }
        }
        samples.push(t0.elapsed().as_secs_f64() * 1e6 / n as f64);
    }
    report(figure, n, samples);
}

/// Whether the figure `name` was asked for: no filter, or a filter argument it contains.
fn wanted(name: &str) -> bool {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

fn main() {
    let limits = CodeRuntimeLimits::default();
    match TypeScriptRuntime::new(limits) {
        Ok(ts) => bench(
            Arc::new(ts),
            "",
            [
                "return 1",
                "for (let j = 0; j < 100; j++) await tools.echo({text: \"x\"}); return 1",
                "await Promise.all(Array.from({length: 100}, () => tools.echo({text: \"x\"}))); return 1",
            ],
        ),
        Err(e) => println!("{}", json!({"figure": "run_code_error", "error": e.message})),
    }
    match PythonRuntime::new(limits) {
        Ok(py) => {
            floor(&py, "run_code_python_floor_per_run");
            // The same floor without the boundary: what containing a run costs.
            if let Ok(host) = PythonRuntime::with_isolation("python3", limits, PythonIsolation::Host) {
                floor(&host, "run_code_python_floor_per_run_host_posture");
            }
            bench(
                Arc::new(py),
                "_python",
                [
                    "return 1",
                    "for _ in range(100):\n    await tools.echo({\"text\": \"x\"})\nreturn 1",
                    "import asyncio\nawait asyncio.gather(*[tools.echo({\"text\": \"x\"}) for _ in range(100)])\nreturn 1",
                ],
            );
        }
        Err(e) => println!("{}", json!({"figure": "run_code_error_python", "error": e.message})),
    }
}
