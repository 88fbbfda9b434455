//! The template adapter (`adapters/template-python/`, standard-library Python) cannot rot: its JSON
//! self-check, plumbing selftest and seams test (results through the porter's own observer, `rootCallId`,
//! abort ordering: registry.py's seams, so adapter.py needs no patch) pass, and its sample registry passes its CI slices through the built
//! harness — `unk-` with no expectations, `reg-` with its strict expectations file.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn template() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/template-python")
}

#[test]
fn json_self_check_plumbing_selftest_and_seams_test_pass() {
    for script in ["jsonjs.py", "selftest.py", "seams_test.py"] {
        let out = Command::new("python3").arg(template().join(script)).output().expect("python3 runs");
        assert!(out.status.success(), "{script} failed:\n{}", text(&out));
    }
}

#[test]
fn the_sample_registry_passes_its_ci_slices() {
    let dir = temp_dir("template-slices");
    let run = template().join("run");
    let expectations = template().join("expectations.yaml");
    // The slices are scenarios: leave the corpora out (they take most of a debug build's load time).
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let empty = empty.to_str().unwrap();
    for (filter, expectations) in [("unk-", None), ("reg-", Some(expectations.to_str().unwrap()))] {
        let report = dir.join(format!("{filter}report.jsonl"));
        let mut args = vec!["--adapter", run.to_str().unwrap(), "--report", report.to_str().unwrap(), "--format", "terse", filter];
        args.extend(["--corpus", empty, "--sdk-corpus", empty]);
        if let Some(path) = expectations {
            args.extend(["--expectations", path]);
        }
        let out = harness(&args, &[]);
        assert!(out.status.success(), "slice {filter}:\n{}", text(&out));
        let r = read_report(&report);
        let passed = r.trials.values().filter(|t| t["outcome"] == "PASS").count();
        assert!(passed >= 3, "slice {filter}: only {passed} PASS\n{}", text(&out));
    }
}
