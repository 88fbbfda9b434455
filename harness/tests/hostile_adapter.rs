//! Hostile adapters (`common/hostile.py`) against the built harness, each under a time limit: an adapter
//! that stops reading, floods stdout or stderr, leaves processes behind, sends messages after its session
//! closed, answers ids nobody asked for, lies in `eventsThrough`, returns huge values, or never comes back
//! from a restart. Each is reported as `conformance/PROTOCOL.md` § Limits says, and the run goes on.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

/// Runs the harness against the hostile adapter, one process at a time: its misbehaviours are keyed to
/// the first process started (marker files), and the checks follow one trial after another.
fn run(dir: &std::path::Path, spec: &std::path::Path, extra: &[&str], envs: &[(&str, &str)]) -> (Bounded, Report) {
    let adapter = hostile_adapter(dir);
    let report = dir.join("report.jsonl");
    let mut args =
        vec!["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", report.to_str().unwrap(), "--test-threads", "1"];
    args.extend_from_slice(extra);
    let out = harness_bounded(dir, &args, envs, LIMIT);
    let report = read_report(&report);
    (out, report)
}

/// A scenario whose `session/open` request is `size` bytes or more (a long tool description).
fn big_scenario(id: &str, size: usize) -> String {
    let text = "y".repeat(size);
    format!(
        "id: {id}\nrules: [T-001]\nlevel: must\ndescription: Big.\nsetup:\n  tools:\n    - name: echo\n      description: {text}\nsteps: []\n"
    )
}

#[test]
fn a_write_to_an_adapter_that_stopped_reading_times_out() {
    let dir = temp_dir("hostile-deaf");
    let spec = spec_with(&dir, &[("1.yaml", big_scenario("a-big", 1 << 20)), ("2.yaml", scenario("b-ok"))]);
    let (out, report) = run(&dir, &spec, &["--step-timeout", "2"], &[("FAKE_DEAF", "1")]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.outcome("a-big"), "TIMEOUT", "{}", short(report.message("a-big")));
    assert!(report.message("a-big").contains("session/open"), "{}", short(report.message("a-big")));
    assert_eq!(report.outcome("b-ok"), "PASS", "{}", short(report.message("b-ok")));
}

#[test]
fn an_endless_stdout_line_is_an_adapter_error_with_bounded_memory() {
    let dir = temp_dir("hostile-flood");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-flood")), ("2.yaml", scenario("b-ok"))]);
    // The 256 MiB line must be refused by its length, not by the clock: on a loaded two-core machine moving
    // it took longer than a 4 s step (TIMEOUT instead of the adapter error this test is about).
    let (out, report) = run(&dir, &spec, &["--step-timeout", "30"], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.labels()["a-flood"], "ERROR(adapter)", "{}", short(report.message("a-flood")));
    let message = report.message("a-flood");
    assert!(message.contains("longer than the protocol's limit of 268435456 bytes") && message.contains("bytes without a newline"), "{}", short(message));
    assert_eq!(report.outcome("b-ok"), "PASS");
    assert!(out.peak_rss_kib < 1 << 20, "peak RSS {} KiB", out.peak_rss_kib);
}

#[test]
fn stderr_without_newlines_keeps_a_bounded_tail() {
    let dir = temp_dir("hostile-stderr-flood");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-stderrflood")), ("2.yaml", scenario("b-ok"))]);
    let (out, report) = run(&dir, &spec, &["--step-timeout", "10"], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.outcome("a-stderrflood"), "CRASH", "{}", short(report.message("a-stderrflood")));
    let message = report.message("a-stderrflood");
    assert!(message.contains("last words before dying"), "{}", &message[..message.len().min(3000)]);
    assert!(message.len() < 200_000, "{} bytes of stderr in the message", message.len());
    assert_eq!(report.outcome("b-ok"), "PASS");
    assert!(out.peak_rss_kib < 512 << 10, "peak RSS {} KiB", out.peak_rss_kib);
}

#[test]
fn timeouts_and_adapter_errors_show_stderr() {
    let dir = temp_dir("hostile-stderr-shown");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-hangerr")), ("2.yaml", scenario("b-garbageerr")), ("3.yaml", scenario("c-ok"))]);
    let (out, report) = run(&dir, &spec, &["--step-timeout", "1.5"], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.outcome("a-hangerr"), "TIMEOUT");
    assert!(report.message("a-hangerr").contains("stuck waiting for the database"), "{}", short(report.message("a-hangerr")));
    assert_eq!(report.labels()["b-garbageerr"], "ERROR(adapter)");
    assert!(report.message("b-garbageerr").contains("about to print garbage"), "{}", short(report.message("b-garbageerr")));
    assert_eq!(report.outcome("c-ok"), "PASS");
}

#[test]
fn messages_after_session_close_blame_their_session() {
    let dir = temp_dir("hostile-strays");
    let spec = spec_with(
        &dir,
        &[
            ("1.yaml", scenario("a-dupclose")),
            ("2.yaml", scenario("b-ok")),
            ("3.yaml", scenario("c-lateevent")),
            ("4.yaml", scenario("d-ok")),
            ("5.yaml", scenario("e-lateevent")),
        ],
    );
    let (out, report) = run(&dir, &spec, &[], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    for innocent in ["b-ok", "d-ok"] {
        assert_eq!(report.outcome(innocent), "PASS", "{innocent}: {}\n{}", report.message(innocent), out.log());
    }
    let blamed = |session: &str| {
        report.trials.iter().filter(|(id, t)| id.starts_with(session) && t["outcome"] == "ERROR").map(|(_, t)| t["message"].as_str().unwrap_or("").to_owned()).collect::<Vec<_>>()
    };
    assert!(blamed("a-dupclose").iter().any(|m| m.contains("second response")), "{:?}\n{}", report.labels(), out.log());
    assert!(blamed("c-lateevent").iter().any(|m| m.contains("event")), "{:?}", report.labels());
    assert!(blamed("e-lateevent").iter().any(|m| m.contains("event")), "the last session's late event: {:?}", report.labels());
    let footer = report.footer.as_ref().unwrap();
    assert_eq!(footer["planned"], footer["executed"], "{footer}");
}

#[test]
fn an_unsolicited_response_is_an_unexpected_id() {
    let dir = temp_dir("hostile-unsolicited");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-unsolicited")), ("2.yaml", scenario("b-ok"))]);
    let (out, report) = run(&dir, &spec, &[], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.labels()["a-unsolicited"], "ERROR(adapter)");
    let message = report.message("a-unsolicited");
    assert!(message.contains("unexpected response id 999999") && !message.contains("schema"), "{}", short(message));
    assert_eq!(report.outcome("b-ok"), "PASS");
}

#[test]
fn events_through_below_the_events_received_is_an_adapter_error() {
    let dir = temp_dir("hostile-through");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-through")), ("2.yaml", scenario("b-ok"))]);
    let (out, report) = run(&dir, &spec, &[], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.labels()["a-through"], "ERROR(adapter)", "{}", short(report.message("a-through")));
    assert!(report.message("a-through").contains("eventsThrough 0"), "{}", short(report.message("a-through")));
    assert_eq!(report.outcome("b-ok"), "PASS");
}

#[test]
fn fail_diffs_cut_long_lines() {
    let dir = temp_dir("hostile-bigvalue");
    let scenario = "id: a-bigvalue\nrules: [T-001]\nlevel: must\ndescription: Huge value.\nsetup:\n  tools:\n    - name: echo\nsteps:\n  - execute: { name: echo, arguments: {} }\n    expect:\n      result: { isError: false, value: small, content: [{ type: text, text: x }] }\n";
    let spec = spec_with(&dir, &[("1.yaml", scenario.to_owned())]);
    let (out, report) = run(&dir, &spec, &[], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.outcome("a-bigvalue"), "FAIL", "{}", short(report.message("a-bigvalue")));
    assert!(report.message("a-bigvalue").contains("more bytes"), "{}", short(report.message("a-bigvalue")));
    let size = std::fs::metadata(dir.join("report.jsonl")).unwrap().len();
    assert!(size < 1 << 20, "report of {size} bytes");
    assert!(out.stdout_len < 1 << 20, "stdout of {} bytes", out.stdout_len);
}

#[test]
fn restarts_that_keep_failing_trip_the_breaker() {
    let dir = temp_dir("hostile-breaker");
    let mut scenarios = vec![("0.yaml", scenario("a-hang"))];
    let names = ["1.yaml", "2.yaml", "3.yaml", "4.yaml", "5.yaml", "6.yaml"];
    for (i, file) in names.iter().enumerate() {
        scenarios.push((file, scenario(&format!("b{i}-ok"))));
    }
    let spec = spec_with(&dir, &scenarios);
    // `run` uses one process at a time: the count below is of restarts in a row (with one process per core,
    // starts already under way when the breaker trips still finish, so there can be one more per extra one).
    let (out, report) = run(&dir, &spec, &["--step-timeout", "1"], &[("FAKE_INIT_HANG", "1")]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.outcome("a-hang"), "TIMEOUT");
    assert!(report.message("b0-ok").contains("waiting for a licence server"), "a restart's stderr is shown: {}", short(report.message("b0-ok")));
    let starts = pids(&dir.join("starts")).len();
    assert_eq!(starts, 4, "the first start and three failed restarts, then no more: {:?}", report.labels());
    for i in 3..6 {
        let id = format!("b{i}-ok");
        assert_eq!(report.labels()[&id], "ERROR(adapter)");
        assert!(report.message(&id).contains("failed to restart 3 times in a row"), "{}", short(report.message(&id)));
        assert!(report.message(&id).contains("initialize"), "the reason is named: {}", report.message(&id));
    }
}

#[test]
fn restarts_kill_grandchildren_that_left_the_group() {
    let dir = temp_dir("hostile-setsid");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-hang")), ("2.yaml", scenario("b-ok"))]);
    let (out, report) = run(&dir, &spec, &["--step-timeout", "1"], &[("FAKE_SETSID", "1")]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.outcome("b-ok"), "PASS");
    let grandchildren = pids(&dir.join("grandchildren"));
    assert_eq!(grandchildren.len(), 2, "one per start");
    std::thread::sleep(Duration::from_millis(200));
    let left: Vec<u32> = grandchildren.into_iter().filter(|&p| alive(p)).collect();
    for &pid in &left {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

/// Waits up to `bound` for every pid to be gone; returns those still alive (and kills them).
fn left_after(pids_: Vec<u32>, bound: Duration) -> Vec<u32> {
    let deadline = std::time::Instant::now() + bound;
    let mut left = pids_;
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left.retain(|&p| alive(p));
    }
    for &pid in &left {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    left
}

#[test]
fn a_grandchild_with_no_token_and_its_own_session_dies_with_its_adapter() {
    let dir = temp_dir("hostile-orphan");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-orphan")), ("2.yaml", scenario("b-ok"))]);
    let (out, report) = run(&dir, &spec, &["--step-timeout", "2"], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.outcome("a-orphan"), "CRASH", "{}", short(report.message("a-orphan")));
    assert_eq!(report.outcome("b-ok"), "PASS", "{}", short(report.message("b-ok")));
    let orphans = pids(&dir.join("orphans"));
    assert_eq!(orphans.len(), 1, "{}", out.log());
    let left = left_after(orphans, Duration::from_millis(500));
    assert!(left.is_empty(), "`env -i setsid` grandchild left behind: {left:?}");
}

#[test]
fn a_harness_killed_with_sigkill_leaves_no_adapter() {
    let dir = temp_dir("hostile-sigkilled");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-busy")), ("2.yaml", scenario("b-busy"))]);
    let adapter = hostile_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let args = ["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", report_path.to_str().unwrap(), "--step-timeout", "60"];
    let busy = dir.join("busy");
    let mut sent = false;
    let out = harness_driven(&dir, &args, &[], Duration::from_secs(30), |pid| {
        if !sent && pids(&busy).len() >= 4 {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            sent = true;
        }
    });
    assert!(sent, "the adapters never got busy: {}", out.log());
    let started: Vec<u32> = pids(&dir.join("starts")).into_iter().chain(pids(&busy)).collect();
    let left = left_after(started, Duration::from_secs(2));
    assert!(left.is_empty(), "processes outlived the harness killed with SIGKILL: {left:?}");
}

fn interrupted_by(signal: &str, code: i32) {
    let dir = temp_dir(&format!("hostile-{signal}"));
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-hang")), ("2.yaml", scenario("b-ok"))]);
    let adapter = hostile_adapter(&dir);
    let report_path = dir.join("report.jsonl");
    let args = ["--adapter", &adapter, "--spec", spec.to_str().unwrap(), "--report", report_path.to_str().unwrap(), "--step-timeout", "60"];
    let starts = dir.join("starts");
    let mut sent = None;
    let out = harness_driven(&dir, &args, &[("FAKE_SETSID", "1")], Duration::from_secs(30), |pid| {
        if sent.is_none() && std::fs::read_to_string(&report_path).unwrap_or_default().contains("\"header\"") && !pids(&starts).is_empty() {
            std::thread::sleep(Duration::from_millis(300));
            let _ = std::process::Command::new("kill").args([&format!("-{signal}"), &pid.to_string()]).status();
            sent = Some(());
        }
    });
    assert!(sent.is_some(), "{}", out.log());
    std::thread::sleep(Duration::from_millis(200));
    let left: Vec<u32> = pids(&starts).into_iter().chain(pids(&dir.join("grandchildren"))).filter(|&p| alive(p)).collect();
    for &pid in &left {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    assert!(left.is_empty(), "processes left behind after {signal}: {left:?}");
    assert_eq!(out.status.code(), Some(code), "{}", out.log());
    let report = read_report(&report_path);
    let footer = report.footer.expect("a footer saying the run was interrupted");
    assert_eq!(footer["complete"], false);
    assert!(footer["aborted"].as_str().unwrap_or("").contains(&format!("interrupted by SIG{signal}")), "{footer}");
}

#[test]
fn sigterm_kills_the_adapter_and_says_so() {
    interrupted_by("TERM", 143);
}

#[test]
fn sigint_kills_the_adapter_and_says_so() {
    interrupted_by("INT", 130);
}

#[test]
fn unknown_capability_names_are_warned_about_within_a_bound() {
    let dir = temp_dir("hostile-feature-flood");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-ok"))]);
    let (out, report) = run(&dir, &spec, &[], &[("FAKE_FEATURE_FLOOD", "20000")]);
    assert_eq!(out.status.code(), Some(0), "{}", short(&out.log()));
    assert_eq!(report.outcome("a-ok"), "PASS");
    assert!(out.stderr.len() < 16 << 10, "{} bytes of warnings on stderr", out.stderr.len());
    assert!(out.stderr.contains("declares 19990 more unknown feature names, not shown"), "{}", short(&out.stderr));
    assert!(out.stderr.contains("more bytes)"), "each name is cut: {}", short(&out.stderr));
}

#[test]
fn an_event_flood_inside_one_step_is_bounded_and_said() {
    let dir = temp_dir("hostile-event-flood");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-eventflood")), ("2.yaml", scenario("b-ok"))]);
    let (out, report) = run(&dir, &spec, &["--step-timeout", "50"], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", short(&out.log()));
    assert_eq!(report.labels()["a-eventflood"], "ERROR(adapter)", "{}", short(report.message("a-eventflood")));
    let message = report.message("a-eventflood");
    assert!(message.contains("50000 events before its response to `session/open`") && message.contains("the 40000 past the limit were dropped"), "{}", short(message));
    assert!(report.trials["a-eventflood"]["transcript"].to_string().contains("lines cut"), "the transcript says what it cut");
    assert_eq!(report.outcome("b-ok"), "PASS");
    let size = std::fs::metadata(dir.join("report.jsonl")).unwrap().len();
    assert!(size < 1 << 20, "report of {size} bytes");
    assert!(out.stdout_len < 1 << 20, "stdout of {} bytes", out.stdout_len);
}

#[test]
fn a_stray_flood_after_session_close_is_bounded_and_said() {
    let dir = temp_dir("hostile-stray-flood");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-straystorm")), ("2.yaml", scenario("b-ok"))]);
    let (out, report) = run(&dir, &spec, &["--step-timeout", "50"], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", short(&out.log()));
    let blamed: Vec<&str> =
        report.trials.iter().filter(|(id, t)| id.starts_with("a-straystorm") && t["outcome"] == "ERROR").map(|(_, t)| t["message"].as_str().unwrap_or("")).collect();
    assert!(!blamed.is_empty(), "{:?}", report.labels());
    assert!(blamed.iter().any(|m| m.contains("more messages of this session, not kept")), "{}", short(blamed[0]));
    let size = std::fs::metadata(dir.join("report.jsonl")).unwrap().len();
    assert!(size < 2 << 20, "report of {size} bytes");
    assert!(out.stdout_len < 1 << 20, "stdout of {} bytes", out.stdout_len);
}

#[test]
fn a_first_initialize_that_times_out_shows_the_stderr_tail() {
    let dir = temp_dir("hostile-first-init-hang");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-ok"))]);
    let (out, report) = run(&dir, &spec, &["--step-timeout", "1"], &[("FAKE_FIRST_INIT_HANG", "1")]);
    assert_eq!(out.status.code(), Some(2), "{}", out.log());
    assert!(out.stderr.contains("failed to initialize") && out.stderr.contains("still loading the model weights"), "{}", out.log());
    let aborted = report.footer.as_ref().unwrap()["aborted"].as_str().unwrap_or("").to_owned();
    assert!(aborted.contains("still loading the model weights"), "{aborted}");
}

#[test]
fn a_bom_before_the_initialize_answer_is_named() {
    let dir = temp_dir("hostile-bom");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-ok"))]);
    let (out, _) = run(&dir, &spec, &[], &[("FAKE_BOM", "1")]);
    assert_eq!(out.status.code(), Some(2), "{}", out.log());
    assert!(out.stderr.contains("byte order mark (U+FEFF, bytes EF BB BF)") && out.stderr.contains("<BOM>{"), "{}", out.log());
}

#[test]
fn a_timeout_names_the_option_that_sets_it() {
    let dir = temp_dir("hostile-timeout-flag");
    let spec = spec_with(&dir, &[("1.yaml", scenario("a-hang")), ("2.yaml", scenario("b-ok"))]);
    let (out, report) = run(&dir, &spec, &["--step-timeout", "1"], &[]);
    assert_eq!(out.status.code(), Some(101), "{}", out.log());
    assert_eq!(report.outcome("a-hang"), "TIMEOUT");
    assert!(report.message("a-hang").contains("(--step-timeout)"), "{}", short(report.message("a-hang")));
}
