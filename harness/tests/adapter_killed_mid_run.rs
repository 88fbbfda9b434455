//! The reference adapter killed mid-run leaves nothing behind (and the hostile corpora of
//! `reference/tests/hostile/` settle through it first): a `run_code` step whose Python program
//! never ends (busy, sleeping, or stopped by its own `SIGSTOP`) outlives the harness's `--step-timeout`, the
//! harness kills the adapter (`SIGKILL`, a TIMEOUT), and afterwards no process the adapter started — its
//! fork server, the run, a spare — exists. They are found by their working directory: the harness runs in
//! a fresh directory, and the adapter, its fork server and every run inherit it (runs clear their
//! environment, so an environment token could not find them).
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{harness_in, spec_with, temp_dir};

fn scenario(id: &str, program: &str) -> String {
    scenario_within(id, "python", program, 600_000)
}

/// The tools the corpus programs call: `x` answers `{}`, `echo` its argument, `hang` waits for its abort.
const TOOLS: &str = "  tools:\n    - { name: x, rawParameters: { type: object }, output: { schema: { type: object }, render: json }, body: [{ return: {} }] }\n    \
                     - { name: echo, rawParameters: { type: object }, output: { schema: { type: object }, render: json }, body: [{ returnArgument: \"\" }] }\n    \
                     - { name: hang, rawParameters: { type: object }, output: { schema: { type: object }, render: json }, body: [{ awaitAbort: true }] }\n";

/// One `run_code` step running `program` in `runtime` under `wall_ms` (busy budget alike), a 64 MiB heap
/// cap and a 1 MiB output ledger (a flood's 64 MiB result is the rendering's business, not this test's).
fn scenario_within(id: &str, runtime: &str, program: &str, wall_ms: u64) -> String {
    let code: String = program.lines().map(|l| format!("              {l}\n")).collect();
    format!(
        "id: {id}\nrules: [T-001]\nlevel: must\ndescription: A hostile {runtime} program.\nsetup:\n  mode: code\n  runtime: {runtime}\n  \
         runtimeLimits: {{ computeMs: {wall_ms}, maxWallMs: {wall_ms}, maxOutputBytes: 1048576, maxHeapMb: 64 }}\n  agents: [a]\n{TOOLS}steps:\n  - execute:\n      callId: c1\n      name: run_code\n      \
         agent: a\n      arguments:\n        description: hostile\n        code: |-\n{code}    expect:\n      result: {{ isError: false }}\n"
    )
}

/// Processes whose working directory is `dir`.
fn living_in(dir: &Path) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir) {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat.rfind(')').is_some_and(|close| matches!(stat[close + 1..].split_ascii_whitespace().next(), Some("Z" | "X"))) {
                continue;
            }
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let shown: String = String::from_utf8_lossy(&cmdline).replace('\0', " ").chars().take(80).collect();
            found.push((pid, shown));
        }
    }
    found
}

/// Runs the harness over `files` (scenario file name → text) through the reference adapter, in a fresh
/// working directory under `dir` that the adapters and their runs inherit; returns that directory, the
/// harness's output and the report's text.
fn run_through_adapter(dir: &Path, files: &[(String, String)], step_timeout: &str) -> (PathBuf, std::process::Output, String) {
    let refs: Vec<(&str, String)> = files.iter().map(|(f, t)| (f.as_str(), t.clone())).collect();
    let spec = spec_with(dir, &refs);
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    let report = dir.join("report.jsonl");
    let adapter = env!("CARGO_BIN_EXE_dsh-reference-adapter");
    let args = ["--adapter", adapter, "--spec", spec.to_str().unwrap(), "--report", report.to_str().unwrap(), "--step-timeout", step_timeout];
    let output = harness_in(&work, &args);
    let report_text = std::fs::read_to_string(&report).unwrap();
    (work, output, report_text)
}

/// What still lives in `work` after a short bound (the kernel delivers the death signals at once).
fn left_in(work: &Path) -> Vec<(u32, String)> {
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut left = living_in(work);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = living_in(work);
    }
    left
}

#[test]
fn a_timed_out_python_run_leaves_no_process_when_the_harness_kills_the_adapter() {
    let dir = temp_dir("adapter-killed-mid-run");
    let programs = [
        ("busy", "while True:\n    pass"),
        ("asleep", "import time\ntime.sleep(1000)"),
        ("stopped", "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)"),
    ];
    let files: Vec<(String, String)> = programs.iter().map(|(id, p)| (format!("{id}.yaml"), scenario(&format!("never-{id}"), p))).collect();
    let (work, output, report_text) = run_through_adapter(&dir, &files, "2");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "three never-ending steps must not pass:\n{text}");
    assert_eq!(report_text.matches("\"outcome\":\"TIMEOUT\"").count(), 3, "each step times out:\n{report_text}");
    let left = left_in(&work);
    assert!(left.is_empty(), "processes left behind by killed adapters: {left:?}");
}

/// The whole hostile corpus (`reference/tests/hostile/`, Python and TypeScript) through the reference adapter, then a
/// program that never ends and a killed adapter: every corpus trial settles (PASS or FAIL — its result is
/// not what this checks — or, for a call flood, the harness's events-a-step limit; never CRASH or TIMEOUT),
/// and nothing any of them started is left.
#[test]
fn the_hostile_corpus_through_the_adapter_leaves_nothing_when_it_is_killed() {
    let dir = temp_dir("adapter-hostile-corpus");
    let mut files: Vec<(String, String)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (runtime, folder, extension, at_least) in [("python", "python", ".py", 25), ("typescript", "typescript", ".ts", 13)] {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference/tests/hostile").join(folder);
        let mut these: Vec<String> =
            std::fs::read_dir(&corpus).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|n| n.ends_with(extension)).collect();
        these.sort();
        assert!(these.len() >= at_least, "the corpus is there: {}", corpus.display());
        for name in these {
            let program = std::fs::read_to_string(corpus.join(&name)).unwrap();
            let id = format!("hostile-{runtime}-{}", name.trim_end_matches(extension).replace('_', "-"));
            files.push((format!("{id}.yaml"), scenario_within(&id, runtime, &program, 3_000)));
            names.push(name);
        }
    }
    files.push(("zz-never.yaml".to_owned(), scenario("zz-never-ends", "while True:\n    pass")));
    // A generous step timeout: a call flood's sub-calls each send several events, and in a debug build the
    // harness validating ~100,000 of them takes longer than the run itself (14 s in-process, at a 3 s wall).
    let (work, output, report_text) = run_through_adapter(&dir, &files, "40");
    assert!(!output.status.success(), "a never-ending step must not pass");
    let trials: Vec<serde_json::Value> =
        report_text.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()).filter(|r| r["type"] == "trial").collect();
    assert_eq!(trials.len(), names.len() + 1, "{report_text}");
    for trial in &trials {
        let (id, outcome) = (trial["id"].as_str().unwrap(), trial["outcome"].as_str().unwrap());
        if id == "zz-never-ends" {
            assert_eq!(outcome, "TIMEOUT", "{trial}");
        } else {
            // A call flood's sub-calls send more events in one step than the harness keeps (PROTOCOL.md §
            // Limits): that trial is an ERROR naming the limit, and it still settled.
            let flood = outcome == "ERROR" && trial["message"].as_str().is_some_and(|m| m.contains("events a step"));
            assert!(matches!(outcome, "PASS" | "FAIL") || flood, "{id} must settle through the adapter, got {outcome}: {trial}");
        }
    }
    let left = left_in(&work);
    assert!(left.is_empty(), "processes left behind: {left:?}");
}
