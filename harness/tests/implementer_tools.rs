//! The tools for implementers, end to end through the built `dsh-harness` against fake adapters: a
//! `failure` notification ends the request in flight as `ERROR(adapter)` at once (no TIMEOUT), JUnit has
//! one testcase per trial with the right element, a FAIL header names the file, line and rules,
//! `--update-expectations` writes an entry whose placeholder fails the next run, and `explain` prints a
//! scenario's file, rules and steps.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use std::time::{Duration, Instant};

use common::*;

/// The fake adapter, plus: at `session/open` of a `report-*` session it sends a `failure` notification
/// and never answers; a `lacks-*` session declares an unknown feature name at `initialize`.
fn reporting_adapter(dir: &std::path::Path) -> String {
    let script = FAKE_ADAPTER.replace(
        r#"        elif session.startswith("hang"):"#,
        r#"        elif session.startswith("report"):
            send({"jsonrpc": "2.0", "method": "failure", "params": {"session": session, "callId": "call-1", "message": "fixture instruction `teleport` is not implemented"}})
            continue
        elif session.startswith("hang"):"#,
    );
    assert_ne!(script, FAKE_ADAPTER, "the fake adapter changed: update this test");
    let script = script.replace(r#""features": []"#, r#""features": ["agents", "change-listener"]"#);
    let path = dir.join("reporting_adapter.py");
    std::fs::write(&path, script).unwrap();
    format!("python3 -u '{}'", path.display())
}

#[test]
fn a_failure_report_is_an_adapter_error_at_once_and_junit_has_one_case_per_trial() {
    let dir = temp_dir("tools-failure");
    let spec = spec_with(&dir, &[("a.yaml", scenario("report-a")), ("b.yaml", scenario("ok-b")), ("c.yaml", scenario("crash-c"))]);
    let (report, junit) = (dir.join("r.jsonl"), dir.join("j.xml"));
    let started = Instant::now();
    let out = harness(
        &[
            "--adapter", &reporting_adapter(&dir), "--spec", spec.to_str().unwrap(), "--report", report.to_str().unwrap(),
            "--junit", junit.to_str().unwrap(), "--step-timeout", "30",
        ],
        &[],
    );
    assert!(started.elapsed() < Duration::from_secs(25), "waited for the step timeout:\n{}", text(&out));
    let r = read_report(&report);
    assert_eq!(r.outcome("report-a"), "ERROR", "{}", text(&out));
    assert_eq!(r.trials["report-a"]["detail"], "adapter");
    let message = r.message("report-a");
    assert!(message.contains("the adapter reported a failure inside session report-a, call call-1: fixture instruction `teleport`"), "{message}");
    assert_eq!(r.outcome("ok-b"), "PASS", "the adapter was restarted after the report:\n{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ERROR(adapter) at spec/scenarios/t/a.yaml:1; rules: T-001 (details: dsh-harness explain 'report-a')"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("declares feature `change-listener`, which the suite does not know (did you mean `change-listeners`?)"), "{stderr}");

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 3, "{xml}");
    assert!(xml.contains(r#"<testcase classname="T" name="report-a" file="spec/scenarios/t/a.yaml""#), "{xml}");
    assert_eq!(xml.matches("<error type=\"ERROR(adapter)\"").count(), 1, "{xml}");
    assert_eq!(xml.matches("<error type=\"CRASH(").count(), 1, "{xml}");
    assert!(xml.contains(r#"<property name="rule" value="T-001"/>"#) && xml.contains("<system-out>transcript:"), "{xml}");
    assert!(xml.contains(r#"tests="3" failures="0" errors="2" skipped="0""#), "{xml}");
}

#[test]
fn update_expectations_writes_placeholders_that_fail_the_next_run() {
    let dir = temp_dir("tools-update");
    let spec = spec_with(&dir, &[("a.yaml", scenario("crash-a")), ("b.yaml", scenario("ok-b"))]);
    let adapter = fake_adapter(&dir);
    let expectations = dir.join("expectations.yaml");
    std::fs::write(&expectations, "# mine\n- id: ok-b\n  outcome: FAIL\n  reason: used to fail\n").unwrap();
    let args = ["--adapter", adapter.as_str(), "--spec", spec.to_str().unwrap(), "--expectations", expectations.to_str().unwrap()];
    let mut first = args.to_vec();
    first.extend(["--update-expectations", expectations.to_str().unwrap()]);
    let out = harness(&first, &[]);
    assert_eq!(out.status.code(), Some(101), "the run itself had unexpected outcomes:\n{}", text(&out));
    let written = std::fs::read_to_string(&expectations).unwrap();
    assert!(written.starts_with("# mine\n- id: \"crash-a\"\n  outcome: CRASH\n  reason: >-\n    TODO(update-expectations)"), "{written}");
    assert!(!written.contains("ok-b"), "a passing trial keeps no entry:\n{written}");
    let report = dir.join("r.jsonl");
    let mut second = args.to_vec();
    second.extend(["--report", report.to_str().unwrap()]);
    let out = harness(&second, &[]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    let r = read_report(&report);
    let problem = r.trials.values().find(|t| t["detail"] == "harness").expect("the placeholder is a problem of the file");
    assert!(problem["message"].as_str().unwrap().contains("still the placeholder"), "{problem}");
}

#[test]
fn explain_names_the_file_line_rules_and_steps() {
    let dir = temp_dir("tools-explain");
    let text_of = "id: two-steps\nrules: [T-001]\nlevel: must\ndescription: Two schemas steps.\nsteps:\n  - schemas: {}\n    expect: { schemas: [] }\n  - schemas: {}\n    expect: { schemas: [] }\n";
    let spec = spec_with(&dir, &[("w.yaml", scenario("first")), ("x.yaml", text_of.to_owned())]);
    let out = harness(&["explain", "two-steps", "--spec", spec.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("at spec/scenarios/t/x.yaml:"), "{shown}");
    assert!(shown.contains("T-001 (must, spec/rules/t.yaml:5): A test rule."), "{shown}");
    assert!(shown.contains("  1. {\"schemas\":{},\"expect\":{\"schemas\":[]}}\n  2. "), "{shown}");
    let missing = harness(&["explain", "nope", "--spec", spec.to_str().unwrap()], &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing).contains("no trial has the id `nope`"), "{}", text(&missing));
}

#[test]
fn xfail_trials_are_listed_in_the_console_with_their_reason() {
    let dir = temp_dir("tools-xfail-console");
    let spec = spec_with(&dir, &[("a.yaml", scenario("crash-a")), ("b.yaml", scenario("ok-b"))]);
    let expectations = dir.join("expectations.yaml");
    std::fs::write(&expectations, "- id: crash-a\n  outcome: CRASH\n  reason: the adapter exits on purpose here\n").unwrap();
    let args = ["--adapter", &fake_adapter(&dir), "--spec", spec.to_str().unwrap(), "--expectations", expectations.to_str().unwrap()];
    let out = harness(&args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("expected failures (XFAIL: failed as the expectations file says): 1 trial(s)"), "{stdout}");
    assert!(stdout.contains("    crash-a: XFAIL(CRASH"), "{stdout}");
    assert!(stdout.contains("the adapter exits on purpose here"), "{stdout}");
}

/// Every failure header suggests `dsh-harness explain '<id>'`, also for the trials that check nothing: a
/// problem of the expectations file (`FILE:LINE`) and a scenario file that did not load (its path).
#[test]
fn explain_works_on_every_id_a_failure_header_suggests() {
    let dir = temp_dir("tools-explain-suggested");
    let spec = spec_with(&dir, &[("a.yaml", scenario("crash-a")), ("b.yaml", "id: [not a string\n".to_owned())]);
    let expectations = dir.join("expectations.yaml");
    std::fs::write(&expectations, "- id: crash-a\n  outcome: CRASH\n  reason: on purpose\n- id: crash\n  outcome: CRASH\n  reason: a typo\n").unwrap();
    let args = ["--adapter", &fake_adapter(&dir), "--spec", spec.to_str().unwrap(), "--expectations", expectations.to_str().unwrap()];
    let out = harness(&args, &[]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let suggested: Vec<&str> = stdout.split("(details: dsh-harness explain '").skip(1).filter_map(|rest| rest.split("')").next()).collect();
    let problem = format!("{}:4", expectations.display());
    assert!(suggested.contains(&problem.as_str()) && suggested.contains(&"spec/scenarios/t/b.yaml"), "{suggested:?}\n{stdout}");
    for id in suggested {
        let explained = harness(&["explain", id, "--spec", spec.to_str().unwrap()], &[]);
        assert!(explained.status.success(), "explain '{id}' failed:\n{}", text(&explained));
    }
    let shown = harness(&["explain", &problem, "--spec", spec.to_str().unwrap()], &[]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("problem: unknown scenario id `crash`") && shown.contains("ids containing it: crash-a"), "{shown}");
    assert!(shown.contains("     4 | - id: crash\n") && shown.contains("     6 |   reason: a typo\n") && !shown.contains("on purpose"), "{shown}");
    let broken = harness(&["explain", "spec/scenarios/t/b.yaml", "--spec", spec.to_str().unwrap()], &[]);
    let broken = String::from_utf8_lossy(&broken.stdout);
    assert!(broken.contains("did not load") && broken.contains("spec/scenarios/t/b.yaml:2:1: YAML syntax"), "{broken}");
}
