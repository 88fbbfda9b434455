//! Broken suites and command lines against the built harness, each under a time limit: alias bombs,
//! filters that would hide load errors, paths that do not exist, stale reports, unwritable reports,
//! broken rules files, links, FIFOs and devices among the scenarios, invalid UTF-8, deep flow nesting,
//! bad expectations entries, `--fail-fast`, and `--help`. None may crash, hang or look green.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

fn run(dir: &Path, args: &[&str]) -> Bounded {
    harness_bounded(dir, args, &[], LIMIT)
}

fn adapter_args<'a>(adapter: &'a str, spec: &'a Path, report: &'a Path) -> Vec<&'a str> {
    vec!["--adapter", adapter, "--spec", spec.to_str().unwrap(), "--report", report.to_str().unwrap()]
}

/// A scenario whose body returns a mapping of `anchors` keys, each anchoring `levels` levels of block
/// lists (`- - - …`, two bytes a level) around an alias of the one before.
fn alias_bomb(id: &str, anchors: usize, levels: usize) -> String {
    let mut text = format!("id: {id}\nrules: [T-001]\nlevel: must\ndescription: Alias depth bomb.\nsetup:\n  tools:\n    - name: echo\n      body:\n        - return:\n");
    for i in 0..anchors {
        let inner = if i == 0 { "0".to_owned() } else { format!("*a{}", i - 1) };
        text.push_str(&format!("            k{i}: &a{i}\n              {}{inner}\n", "- ".repeat(levels)));
    }
    text
}

#[test]
fn depth_through_aliases_is_capped() {
    let dir = temp_dir("broken-alias-depth");
    // The file: ~40 KB nesting ~20,000 levels through 20 anchors of 990 levels each (each under
    // the old 1000-level guard); and a chain whose every anchor is under the limit, but not the whole.
    let spec = spec_with(
        &dir,
        &[("bomb.yaml", alias_bomb("bomb", 20, 990)), ("chain.yaml", alias_bomb("chain", 10, 200)), ("ok.yaml", scenario("ok-a"))],
    );
    let adapter = fake_adapter(&dir);
    let report = dir.join("report.jsonl");
    let out = run(&dir, &adapter_args(&adapter, &spec, &report));
    assert_eq!(out.status.code(), Some(101), "{}", short(&out.log()));
    let report = read_report(&report);
    for file in ["spec/scenarios/t/bomb.yaml", "spec/scenarios/t/chain.yaml"] {
        assert_eq!(report.labels()[file], "ERROR(scenario)", "{}", short(report.message(file)));
        assert!(report.message(file).contains("nesting deeper than 250 levels"), "{}", short(report.message(file)));
    }
    assert_eq!(report.outcome("ok-a"), "PASS");
}

#[test]
fn a_filter_never_hides_load_errors() {
    let dir = temp_dir("broken-filter");
    let spec = spec_with(&dir, &[("guards.yaml", "id: guards\nrules: [T-001\n".to_owned()), ("pipe-guard.yaml", scenario("pipe-guard"))]);
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let mut args = adapter_args(&adapter, &spec, &report_path);
    args.push("pipe-guard");
    let out = run(&dir, &args);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    let report = read_report(&report_path);
    assert_eq!(report.outcome("pipe-guard"), "PASS");
    assert_eq!(report.labels()["spec/scenarios/t/guards.yaml"], "ERROR(scenario)", "{:?}", report.labels());
    let footer = report.footer.unwrap();
    assert_eq!((footer["planned"].as_u64(), footer["executed"].as_u64()), (Some(2), Some(2)), "{footer}");
    assert!(out.stdout.contains("guards.yaml"), "the load error is shown: {}", out.log());
}

#[test]
fn named_paths_must_exist_and_a_run_must_plan_something() {
    let dir = temp_dir("broken-paths");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a"))]);
    let adapter = fake_adapter(&dir);
    let missing = dir.join("no-such-dir");
    let missing = missing.to_str().unwrap();
    let spec_s = spec.to_str().unwrap();
    for (args, needle) in [
        (vec!["--adapter", &adapter, "--spec", missing], "--spec"),
        (vec!["--adapter", &adapter, "--spec", spec_s, "--corpus", missing], "--corpus"),
        (vec!["--adapter", &adapter, "--spec", spec_s, "--sdk-corpus", missing], "--sdk-corpus"),
        (vec!["--adapter", &adapter, "--spec", spec_s, "--expectations", missing], "--expectations"),
        (vec!["--adapter", &adapter, "--spec", spec_s, "--exact", "no-such-trial"], "nothing to run"),
    ] {
        let report_path = dir.join("report.jsonl");
        std::fs::write(&report_path, "stale\n").unwrap();
        let args = [&args[..], &["--report", report_path.to_str().unwrap()]].concat();
        let out = run(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.log());
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.log());
        let footer = read_report(&report_path).footer.unwrap();
        assert!(footer["complete"] == false && footer["aborted"].as_str().unwrap_or("").contains(needle), "{footer}");
    }
    // In-process with the default corpora: a spec directory that does not exist is no empty green run.
    let out = run(&dir, &["--spec", missing]);
    assert_eq!(out.status.code(), Some(2), "{}", out.log());
}

#[test]
fn a_run_that_stops_early_replaces_a_stale_report() {
    let dir = temp_dir("broken-stale-report");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a"))]);
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    for (adapter, envs, needle) in [
        (adapter.as_str(), vec![("FAKE_PROTOCOL", "2.0")], "protocol version mismatch"),
        ("echo 'cannot start' >&2; exit 7", vec![], "failed to initialize"),
    ] {
        std::fs::write(&report_path, "{\"type\":\"footer\",\"planned\":1,\"executed\":1,\"complete\":true}\n").unwrap();
        let out = harness_bounded(&dir, &adapter_args(adapter, &spec, &report_path), &envs, LIMIT);
        assert_eq!(out.status.code(), Some(2), "{}", out.log());
        let report = read_report(&report_path);
        assert_eq!(report.header["type"], "header", "{needle}");
        let footer = report.footer.unwrap();
        assert_eq!(footer["complete"], false, "{footer}");
        assert!(footer["aborted"].as_str().unwrap_or("").contains(needle), "{footer}");
    }
}

#[test]
fn an_unwritable_report_is_said_and_nothing_runs() {
    let dir = temp_dir("broken-dev-full");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a"))]);
    let adapter = fake_adapter(&dir);
    let out = run(&dir, &["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", "/dev/full"]);
    assert_eq!(out.status.code(), Some(2), "{}", out.log());
    assert!(out.stderr.contains("cannot write the report /dev/full"), "{}", out.log());
    assert!(!out.stdout.contains("no unexpected outcomes"), "{}", out.log());
}

#[test]
fn a_broken_rules_file_is_named_by_the_scenarios_citing_it() {
    let dir = temp_dir("broken-rules");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a"))]);
    write_files(&spec, &[("rules/t.yaml", "area: T\nrules: [\n")]);
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let out = run(&dir, &adapter_args(&adapter, &spec, &report_path));
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    let report = read_report(&report_path);
    let message = report.message("spec/scenarios/t/1.yaml");
    assert!(message.contains("unknown rule id") && message.contains("spec/rules/t.yaml"), "{message}");
    assert_eq!(report.outcome("spec/rules/t.yaml"), "ERROR");
}

#[test]
fn links_fifos_and_devices_among_the_scenarios() {
    let dir = temp_dir("broken-links");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a"))]);
    write_files(&dir, &[("elsewhere/linked.yaml", &scenario("linked-b"))]);
    let scenarios = spec.join("scenarios");
    std::os::unix::fs::symlink(dir.join("elsewhere"), scenarios.join("linked")).unwrap();
    std::os::unix::fs::symlink(&scenarios, scenarios.join("t/loop")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", scenarios.join("t/zero.yaml")).unwrap();
    let fifo = scenarios.join("t/fifo.yaml");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let out = run(&dir, &adapter_args(&adapter, &spec, &report_path));
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    let report = read_report(&report_path);
    assert_eq!(report.outcome("ok-a"), "PASS");
    assert_eq!(report.outcome("linked-b"), "PASS", "a linked directory is walked: {:?}", report.labels());
    for (file, needle) in [("spec/scenarios/t/zero.yaml", "not a regular file"), ("spec/scenarios/t/fifo.yaml", "FIFO"), ("spec/scenarios/t/loop", "loop")] {
        assert_eq!(report.labels().get(file).map(String::as_str), Some("ERROR(scenario)"), "{file}: {:?}", report.labels());
        assert!(report.message(file).contains(needle), "{file}: {}", report.message(file));
    }
}

#[test]
fn invalid_utf8_is_reported_where_it_is() {
    let dir = temp_dir("broken-utf8");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a"))]);
    let mut bytes = b"id: bad-utf8\nrules: [T-001]\nlevel: must\ndescription: caf".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(b"\nsteps: []\n");
    std::fs::write(spec.join("scenarios/t/2.yaml"), bytes).unwrap();
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let out = run(&dir, &adapter_args(&adapter, &spec, &report_path));
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    let report = read_report(&report_path);
    let message = report.message("spec/scenarios/t/2.yaml");
    assert!(message.starts_with("spec/scenarios/t/2.yaml:4:17:") && message.contains("UTF-8"), "{message}");
}

#[test]
fn nesting_has_one_documented_limit() {
    let dir = temp_dir("broken-flow-depth");
    let flow = |depth: usize| format!("{}0{}", "[".repeat(depth), "]".repeat(depth));
    let with_value = |id: &str, value: String| {
        format!("id: {id}\nrules: [T-001]\nlevel: must\ndescription: Deep.\nsetup:\n  tools:\n    - name: echo\n      body:\n        - return: {value}\n")
    };
    let spec = spec_with(
        &dir,
        &[("1.yaml", with_value("ok-deep", flow(200))), ("2.yaml", with_value("flow-300", flow(300))), ("3.yaml", with_value("flow-1000", flow(1000))), ("4.yaml", with_value("block-300", format!("\n          {}0", "- ".repeat(300))))],
    );
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let out = run(&dir, &adapter_args(&adapter, &spec, &report_path));
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    let report = read_report(&report_path);
    assert_eq!(report.outcome("ok-deep"), "PASS", "{}", report.message("ok-deep"));
    for file in ["spec/scenarios/t/2.yaml", "spec/scenarios/t/3.yaml", "spec/scenarios/t/4.yaml"] {
        let message = report.message(file);
        assert!(message.contains("nesting deeper than 250 levels") && !message.contains("recursion limit"), "{file}: {message}");
    }
}

#[test]
fn a_bad_expectations_entry_is_reported_at_its_line_and_the_others_apply() {
    let dir = temp_dir("broken-expectations-entry");
    let spec = spec_with(&dir, &[("1.yaml", scenario("crash-a")), ("2.yaml", scenario("ok-b"))]);
    let adapter = fake_adapter(&dir);
    let expectations = dir.join("expectations.yaml");
    std::fs::write(&expectations, "- id: crash-a\n  outcome: CRASH\n  reason: crashes on purpose\n- id: ok-b\n  outcome: FAIL\n  reason: typo below\n  reasn: oops\n").unwrap();
    let report_path = dir.join("report.jsonl");
    let mut args = adapter_args(&adapter, &spec, &report_path);
    args.extend(["--expectations", expectations.to_str().unwrap()]);
    let out = run(&dir, &args);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    let report = read_report(&report_path);
    assert_eq!(report.outcome("crash-a"), "XFAIL", "the good entry still applies: {:?}", report.labels());
    let problem = format!("{}:7", expectations.display());
    assert!(report.trials.contains_key(&problem), "{:?}", report.labels());
    assert!(report.message(&problem).contains("reasn"), "{}", report.message(&problem));
}

#[test]
fn help_lists_the_harness_options() {
    let dir = temp_dir("broken-help");
    let out = run(&dir, &["--help"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.log());
    for option in ["--adapter", "--spec", "--corpus", "--sdk-corpus", "--report", "--expectations", "--step-timeout", "matrix", "--exact"] {
        assert!(out.stdout.contains(option), "{option} missing from --help:\n{}", out.stdout);
    }
}

#[test]
fn help_promises_the_filters_the_parser_takes() {
    let dir = temp_dir("broken-help-filters");
    let help = run(&dir, &["--help"]);
    assert!(help.stdout.contains("[OPTIONS] [FILTER] [LIBTEST OPTIONS]") && !help.stdout.contains("FILTER..."), "{}", help.stdout);
    // One filter is taken; a second is refused, as the help says.
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a"))]);
    let one = run(&dir, &["--spec", spec.to_str().unwrap(), "--adapter", &fake_adapter(&dir), "--list", "ok"]);
    assert_eq!(one.status.code(), Some(0), "{}", one.log());
    let two = run(&dir, &["--spec", spec.to_str().unwrap(), "--adapter", &fake_adapter(&dir), "--list", "ok", "a"]);
    assert_eq!(two.status.code(), Some(2), "{}", two.log());
}

/// An exact filter loads only its trial's source (`suite::Sources`): the entries of the sources it leaves
/// out cannot be checked, and are not called unknown; a typo in the source it loads still is.
#[test]
fn an_exact_filter_does_not_call_entries_of_unloaded_sources_unknown() {
    let dir = temp_dir("broken-expectations-exact");
    let spec = spec_with(&dir, &[("1.yaml", scenario("ok-a")), ("2.yaml", scenario("ok-b"))]);
    let adapter = fake_adapter(&dir);
    let expectations = dir.join("expectations.yaml");
    let corpus_entry = "- id: \"corpus/validation/deep#1-x\"\n  outcome: FAIL\n  reason: a corpus item\n";
    let report_path = dir.join("report.jsonl");
    let mut args = adapter_args(&adapter, &spec, &report_path);
    args.extend(["--expectations", expectations.to_str().unwrap(), "--exact", "ok-a"]);
    std::fs::write(&expectations, corpus_entry).unwrap();
    let out = run(&dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", out.log());
    assert_eq!(read_report(&report_path).outcomes(), [("ok-a".to_owned(), "PASS".to_owned())].into());
    std::fs::write(&expectations, format!("{corpus_entry}- id: ok-typo\n  outcome: FAIL\n  reason: no such scenario\n")).unwrap();
    let out = run(&dir, &args);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    let problem = format!("{}:4", expectations.display());
    let report = read_report(&report_path);
    assert!(report.message(&problem).contains("unknown scenario id `ok-typo`"), "{:?}", report.labels());
    // Unfiltered, the corpus entry is checked again (this spec has no corpus: unknown).
    let unfiltered = &args[..args.len() - 2];
    let out = run(&dir, unfiltered);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    let first = format!("{}:1", expectations.display());
    assert!(read_report(&report_path).message(&first).contains("unknown scenario id `corpus/validation/deep#1-x`"));
}

#[test]
fn a_duplicate_id_inside_a_file_drops_only_the_duplicate() {
    let dir = temp_dir("broken-duplicate-in-file");
    let member = |id: &str| format!("  - id: {id}\n    rules: [T-001]\n    level: must\n    description: Member {id}.\n    steps: []\n");
    let family = format!("scenarios:\n{}{}{}", member("dup-a"), member("dup-b"), member("dup-a"));
    let spec = spec_with(&dir, &[("fam.yaml", family), ("other.yaml", scenario("other-c"))]);
    let adapter = fake_adapter(&dir);
    let report = dir.join("report.jsonl");
    let out = run(&dir, &adapter_args(&adapter, &spec, &report));
    assert_eq!(out.status.code(), Some(101), "{}", short(&out.log()));
    let report = read_report(&report);
    for id in ["dup-a", "dup-b", "other-c"] {
        assert_eq!(report.outcome(id), "PASS", "{id}: {:?}", report.labels());
    }
    let file = "spec/scenarios/t/fam.yaml";
    assert_eq!(report.labels()[file], "ERROR(scenario)", "{:?}", report.labels());
    let message = report.message(file);
    assert!(message.contains("fam.yaml:12:") && message.contains("duplicate scenario id \"dup-a\" (first at spec/scenarios/t/fam.yaml:2:"), "{message}");
}

#[test]
fn fail_fast_stops_at_the_first_unexpected_outcome_and_never_looks_green() {
    let dir = temp_dir("broken-fail-fast");
    // One trial at a time, in the listed order: the crash comes first, twenty passing trials after it.
    let mut texts = vec![scenario("crash-first")];
    texts.extend((0..20).map(|i| scenario(&format!("ok-{i:02}"))));
    let names: Vec<String> = (0..texts.len()).map(|i| format!("f{i:02}.yaml")).collect();
    let files: Vec<(&str, String)> = names.iter().map(String::as_str).zip(texts).collect();
    let spec = spec_with(&dir, &files);
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let mut args = adapter_args(&adapter, &spec, &report_path);
    args.extend(["--fail-fast", "--test-threads", "1"]);
    let out = run(&dir, &args);
    assert_eq!(out.status.code(), Some(101), "{}", short(&out.log()));
    assert!(out.log().contains("stopped by --fail-fast after the first unexpected outcome, crash-first"), "{}", short(&out.log()));
    let report = read_report(&report_path);
    assert_eq!(report.outcome("crash-first"), "CRASH", "{:?}", report.labels());
    let footer = report.footer.clone().unwrap();
    assert!(footer["complete"] == false && footer["aborted"].as_str().unwrap_or("").contains("--fail-fast"), "{footer}");
    assert!(report.trials.len() < 21, "trials after the crash still ran: {:?}", report.labels());
    // With --update-expectations it is refused up front: a rewrite would drop the entries of unstarted trials.
    let mut refused = adapter_args(&adapter, &spec, &report_path);
    refused.extend(["--fail-fast", "--update-expectations", "x.yaml"]);
    let out = run(&dir, &refused);
    assert_eq!(out.status.code(), Some(2), "{}", short(&out.log()));
    assert!(out.log().contains("--fail-fast and --update-expectations cannot be used together"), "{}", short(&out.log()));
    // Without the flag the same suite runs every trial.
    let out = run(&dir, &adapter_args(&adapter, &spec, &report_path));
    assert_eq!(out.status.code(), Some(101), "{}", short(&out.log()));
    assert_eq!(read_report(&report_path).trials.len(), 21);
}

#[test]
fn fail_fast_abandons_the_trials_in_flight_instead_of_waiting_out_their_budgets() {
    let dir = temp_dir("broken-fail-fast-in-flight");
    // Two at a time: the hang starts first and would hold the run for its whole step budget (50 s); the
    // crash beside it stops the run, which kills the hung trial's adapter and leaves its outcome unrecorded.
    let spec = spec_with(&dir, &[("f00.yaml", scenario("hang-first")), ("f01.yaml", scenario("crash-second"))]);
    let adapter = fake_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let mut args = adapter_args(&adapter, &spec, &report_path);
    args.extend(["--fail-fast", "--test-threads", "2", "--step-timeout", "50"]);
    let out = run(&dir, &args);
    assert_eq!(out.status.code(), Some(101), "{}", short(&out.log()));
    assert!(out.log().contains("abandoned: in flight when --fail-fast stopped the run after crash-second"), "{}", short(&out.log()));
    let report = read_report(&report_path);
    assert_eq!(report.outcome("crash-second"), "CRASH", "{:?}", report.labels());
    assert!(!report.trials.contains_key("hang-first"), "the abandoned trial was recorded: {:?}", report.labels());
    let footer = report.footer.clone().unwrap();
    assert!(footer["aborted"].as_str().unwrap_or("").contains("1 of 2 planned trials executed"), "{footer}");
    // Not waited out: without the kill the run ends only when the hang's 50 s budget does.
    assert!(footer["durationMs"].as_u64().unwrap() < 50_000, "the run waited out the hung trial's budget: {footer}");
}
