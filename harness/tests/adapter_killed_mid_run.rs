//! The reference adapter killed mid-run leaves nothing behind: a `run_code` step whose Python program
//! never ends (busy, sleeping, or stopped by its own `SIGSTOP`) outlives the harness's `--step-timeout`, the
//! harness kills the adapter (`SIGKILL`, a TIMEOUT), and afterwards no process the adapter started — its
//! fork server, the run, a spare — exists. They are found by their working directory: the harness runs in
//! a fresh directory, and the adapter, its fork server and every run inherit it (runs clear their
//! environment, so an environment token could not find them).
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{harness_in, spec_with, temp_dir};

fn scenario(id: &str, program: &str) -> String {
    let code: String = program.lines().map(|l| format!("              {l}\n")).collect();
    format!(
        "id: {id}\nrules: [T-001]\nlevel: must\ndescription: A Python program that never ends.\nsetup:\n  mode: code\n  runtime: python\n  \
         runtimeLimits: {{ computeMs: 600000, maxWallMs: 600000 }}\n  agents: [a]\nsteps:\n  - execute:\n      callId: c1\n      name: run_code\n      \
         agent: a\n      arguments:\n        description: never ends\n        code: |-\n{code}    expect:\n      result: {{ isError: false }}\n"
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

#[test]
fn a_timed_out_python_run_leaves_no_process_when_the_harness_kills_the_adapter() {
    let dir = temp_dir("adapter-killed-mid-run");
    let programs = [
        ("busy", "while True:\n    pass"),
        ("asleep", "import time\ntime.sleep(1000)"),
        ("stopped", "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)"),
    ];
    let files: Vec<(String, String)> = programs.iter().map(|(id, p)| (format!("{id}.yaml"), scenario(&format!("never-{id}"), p))).collect();
    let refs: Vec<(&str, String)> = files.iter().map(|(f, t)| (f.as_str(), t.clone())).collect();
    let spec = spec_with(&dir, &refs);
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    let report = dir.join("report.jsonl");
    let adapter = env!("CARGO_BIN_EXE_dsh-reference-adapter");
    let args = ["--adapter", adapter, "--spec", spec.to_str().unwrap(), "--report", report.to_str().unwrap(), "--step-timeout", "2"];
    let output = harness_in(&work, &args);
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "three never-ending steps must not pass:\n{text}");
    let report_text = std::fs::read_to_string(&report).unwrap();
    assert_eq!(report_text.matches("\"outcome\":\"TIMEOUT\"").count(), 3, "each step times out:\n{report_text}");
    // Nothing the adapters started is left (a short bound: the kernel delivers the death signals at once).
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut left = living_in(&work);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = living_in(&work);
    }
    assert!(left.is_empty(), "processes left behind by killed adapters: {left:?}");
}
