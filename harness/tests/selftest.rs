//! The harness's own behaviour, with fake adapters and fake spec directories: failures of one trial
//! (garbage, crash, hang, broken scenario files) are reported with their outcome and location while every
//! other trial still runs; expectations are strict both ways; a protocol mismatch stops the run at once.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use common::*;
use dsh_conformance::report::{ReportLine, TrialLine};

/// Every line of the report reads back as a `dsh_conformance::ReportLine` (the types `matrix` reads
/// through): a header first, then trial records, then the footer.
fn typed_report(path: &std::path::Path) -> Vec<TrialLine> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<ReportLine> =
        text.lines().map(|l| ReportLine::parse(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert!(matches!(lines.first(), Some(ReportLine::Header(_))), "{text}");
    assert!(matches!(lines.last(), Some(ReportLine::Footer(f)) if f.executed == lines.len() - 2), "{text}");
    lines.into_iter().filter_map(|l| if let ReportLine::Trial(t) = l { Some(t) } else { None }).collect()
}

fn spec_with(dir: &std::path::Path, scenarios: &[(&str, String)]) -> std::path::PathBuf {
    let spec = dir.join("spec");
    write_files(&spec, &[("rules/t.yaml", RULES)]);
    for (file, text) in scenarios {
        write_files(&spec, &[(&format!("scenarios/t/{file}"), text.as_str())]);
    }
    spec
}

#[test]
fn adapter_failures_stay_in_their_trial() {
    let dir = temp_dir("adapter-failures");
    let spec = spec_with(
        &dir,
        &[
            ("1.yaml", scenario("ok-a")),
            ("2.yaml", scenario("garbage-b")),
            ("3.yaml", scenario("ok-c")),
            ("4.yaml", scenario("crash-d")),
            ("5.yaml", scenario("ok-e")),
            ("6.yaml", scenario("hang-f")),
            ("7.yaml", scenario("ok-g")),
            ("8.yaml", scenario("invalid-h")),
            ("9.yaml", scenario("ok-i")),
        ],
    );
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let out = harness(
        &["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", report_path.to_str().unwrap(), "--step-timeout", "1.5"],
        &[],
    );
    let log = text(&out);
    assert_eq!(out.status.code(), Some(101), "{log}");
    let report = read_report(&report_path);
    for ok in ["ok-a", "ok-c", "ok-e", "ok-g", "ok-i"] {
        assert_eq!(report.outcome(ok), "PASS", "{ok}: {}\n{log}", report.message(ok));
    }
    assert_eq!(report.outcome("garbage-b"), "ERROR");
    assert_eq!(report.trials["garbage-b"]["detail"], "adapter");
    assert!(report.message("garbage-b").contains("this is not a protocol message"), "{}", report.message("garbage-b"));

    assert_eq!(report.outcome("crash-d"), "CRASH");
    assert!(report.message("crash-d").contains("boom: crashing on purpose in crash-d"), "{}", report.message("crash-d"));
    assert!(report.trials["crash-d"]["detail"].as_str().unwrap_or("").contains('3'), "{}", report.trials["crash-d"]);

    assert_eq!(report.outcome("hang-f"), "TIMEOUT");
    assert!(report.message("hang-f").contains("session/open"), "{}", report.message("hang-f"));
    assert!(!report.trials["hang-f"]["transcript"].as_array().unwrap().is_empty());

    assert_eq!(report.outcome("invalid-h"), "ERROR");
    assert_eq!(report.trials["invalid-h"]["detail"], "adapter");
    assert!(report.message("invalid-h").contains("schema") && report.message("invalid-h").contains("not a number"), "{}", report.message("invalid-h"));

    let footer = report.footer.expect("footer");
    assert_eq!(footer["planned"], 9);
    assert_eq!(footer["executed"], 9);
    assert_eq!(typed_report(&report_path).len(), 9);
    assert!(log.contains("conformance of fake 0.0.1"), "{log}");
}

#[test]
fn broken_scenario_files_are_error_trials_naming_where() {
    let dir = temp_dir("broken-files");
    let spec = spec_with(
        &dir,
        &[
            ("good.yaml", scenario("ok-a")),
            ("yaml-error.yaml", "id: broken\nrules: [T-001\nlevel: must\n".to_owned()),
            ("unknown-field.yaml", scenario("typo").replace("description:", "descripton:")),
            ("unknown-rule.yaml", scenario("bad-rule").replace("T-001", "T-999")),
        ],
    );
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let out = harness(&["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", report_path.to_str().unwrap()], &[]);
    let log = text(&out);
    assert_eq!(out.status.code(), Some(101), "{log}");
    let report = read_report(&report_path);
    assert_eq!(report.outcome("ok-a"), "PASS", "{log}");
    for (file, needle, line) in [
        ("spec/scenarios/t/yaml-error.yaml", "", ":"),
        ("spec/scenarios/t/unknown-field.yaml", "descripton", ":"),
        ("spec/scenarios/t/unknown-rule.yaml", "T-999", ":"),
    ] {
        assert_eq!(report.outcome(file), "ERROR", "{file}\n{log}");
        assert_eq!(report.trials[file]["detail"], "scenario");
        let message = report.message(file);
        assert!(message.starts_with(&format!("{file}{line}")), "{file}: {message}");
        let at = message[file.len() + 1..].split(':').next().unwrap_or("");
        assert!(at.parse::<usize>().is_ok_and(|l| l >= 1), "{file}: no line number in {message}");
        assert!(message.contains(needle), "{file}: {message}");
    }
    assert_eq!(report.footer.expect("footer")["executed"], 4);
}

#[test]
fn expectations_are_strict_both_ways() {
    let dir = temp_dir("expectations");
    let spec = spec_with(
        &dir,
        &[("1.yaml", scenario("ok-a")), ("2.yaml", scenario("crash-b")), ("3.yaml", scenario("hang-c")), ("4.yaml", scenario("ok-d"))],
    );
    let adapter = fake_adapter(&dir);
    let expectations = dir.join("expectations.yaml");
    // crash-b listed correctly (XFAIL); ok-a listed but passes (XPASS); hang-c skipped; ok-d unlisted.
    std::fs::write(
        &expectations,
        "- id: crash-b\n  outcome: CRASH\n  reason: crashes on purpose\n\
         - id: ok-a\n  outcome: FAIL\n  reason: stale entry\n\
         - id: hang-c\n  outcome: SKIP\n  reason: would hang\n\
         - id: no-such-scenario\n  outcome: FAIL\n  reason: typo\n\
         - id: ok-d\n  outcome: FAIL\n",
    )
    .unwrap();
    let report_path = dir.join("report.jsonl");
    let args = ["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", report_path.to_str().unwrap()];
    let out = harness(&[&args[..], &["--expectations", expectations.to_str().unwrap()]].concat(), &[]);
    let log = text(&out);
    assert_eq!(out.status.code(), Some(101), "{log}");
    let report = read_report(&report_path);
    assert_eq!(report.outcome("crash-b"), "XFAIL", "{log}");
    let trials = typed_report(&report_path);
    let xfail = trials.iter().find(|t| t.id == "crash-b").unwrap();
    assert_eq!(xfail.expected.as_ref().map(|e| e.outcome.as_str()), Some("CRASH"), "{xfail:?}");
    assert!(xfail.transcript.is_some(), "{xfail:?}");
    assert_eq!(report.outcome("ok-a"), "XPASS");
    assert_eq!(report.outcome("hang-c"), "SKIP");
    assert_eq!(report.trials["hang-c"]["detail"], "expectation");
    assert_eq!(report.outcome("ok-d"), "PASS", "an entry without a reason is not applied");
    let problems: Vec<&String> = report.trials.keys().filter(|k| k.contains("expectations.yaml:")).collect();
    assert_eq!(problems.len(), 2, "{:?}", report.trials.keys().collect::<Vec<_>>());
    let messages: String = problems.iter().map(|k| report.message(k)).collect::<Vec<_>>().join("\n");
    assert!(messages.contains("unknown scenario id `no-such-scenario`"), "{messages}");
    assert!(messages.contains("needs a `reason`"), "{messages}");
    assert!(log.contains("would hang"), "skip reason visible: {log}");

    // With only accurate entries the run passes.
    std::fs::write(&expectations, "- id: crash-b\n  outcome: CRASH\n  reason: crashes on purpose\n- id: hang-c\n  outcome: SKIP\n  reason: would hang\n").unwrap();
    let out = harness(&[&args[..], &["--expectations", expectations.to_str().unwrap()]].concat(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // A listed failure with another outcome is unexpected.
    std::fs::write(&expectations, "- id: crash-b\n  outcome: TIMEOUT\n  reason: wrong kind\n- id: hang-c\n  outcome: SKIP\n  reason: would hang\n").unwrap();
    let out = harness(&[&args[..], &["--expectations", expectations.to_str().unwrap()]].concat(), &[]);
    assert_eq!(out.status.code(), Some(101), "{}", text(&out));
    assert_eq!(read_report(&report_path).outcome("crash-b"), "CRASH");
}

#[test]
fn protocol_major_mismatch_stops_the_run() {
    let dir = temp_dir("mismatch");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a"))]);
    let adapter = fake_adapter(&dir);
    let out = harness(&["--adapter", &adapter, "--spec", spec.to_str().unwrap()], &[("FAKE_PROTOCOL", "2.0")]);
    let log = text(&out);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(log.contains("protocol version mismatch") && log.contains("1.0") && log.contains("2.0"), "{log}");
    assert!(!log.contains("running 1 test"), "{log}");
}

#[test]
fn adapter_that_cannot_start_stops_the_run() {
    let dir = temp_dir("no-adapter");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a"))]);
    let out = harness(&["--adapter", "echo 'no such thing' >&2; exit 7", "--spec", spec.to_str().unwrap()], &[]);
    let log = text(&out);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(log.contains("failed to initialize") && log.contains("no such thing"), "{log}");
}

#[test]
fn libtest_filters_and_list_work() {
    let dir = temp_dir("filters");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a")), ("2.yaml", scenario("ok-b"))]);
    let adapter = fake_adapter(&dir);
    let out = harness(&["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--list"], &[]);
    let log = text(&out);
    assert!(log.contains("ok-a: test") && log.contains("ok-b: test"), "{log}");
    let report_path = dir.join("report.jsonl");
    let out = harness(
        &["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", report_path.to_str().unwrap(), "--exact", "ok-b"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = read_report(&report_path);
    assert_eq!(report.outcomes().into_iter().collect::<Vec<_>>(), vec![("ok-b".to_owned(), "PASS".to_owned())]);
    assert_eq!(report.footer.expect("footer")["planned"], 1);
}

#[test]
fn matrix_renders_and_updates_a_readme() {
    let dir = temp_dir("matrix");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a")), ("2.yaml", scenario("crash-b"))]);
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let _ = harness(&["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", report_path.to_str().unwrap()], &[]);
    let out = harness(&["matrix", report_path.to_str().unwrap()], &[]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(table.contains("| fake 0.0.1 (adapter: "), "{table}");
    assert!(table.contains("| T | 1/2 (1 CRASH) |"), "{table}");
    let readme = dir.join("README.md");
    std::fs::write(&readme, "# x\n<!-- matrix:begin -->\nold\n<!-- matrix:end -->\ntail\n").unwrap();
    let out = harness(&["matrix", report_path.to_str().unwrap(), "--update", readme.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let updated = std::fs::read_to_string(&readme).unwrap();
    assert!(!updated.contains("old") && updated.contains("| T | 1/2 (1 CRASH) |") && updated.ends_with("<!-- matrix:end -->\ntail\n"), "{updated}");
}
