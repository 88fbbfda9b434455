//! `dsh-harness probe FILE.yaml [--adapter CMD]` end to end: a scenario written on the spot (no id, rules,
//! level or description) runs against the in-process reference and an adapter; both transcripts are
//! printed, then their difference — none through the reference's own adapter binary, the differing lines
//! against a fake adapter that does not know `call/start`. A file that does not load is exit status 2.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use common::*;

const ECHO: &str = "\
setup:
  tools:
    - name: echo
      parameters: { text: { type: string, required: true } }
      output: { schema: { type: string }, render: text }
      body: [{ returnArgument: text }]
steps:
  - execute: { callId: c1, name: echo, arguments: { text: hi } }
    expect:
      result: { isError: false, value: hi, content: [{ type: text, text: hi }] }
";

#[test]
fn a_probe_prints_both_transcripts_and_their_difference() {
    let dir = temp_dir("probe");
    let file = dir.join("echo.yaml");
    std::fs::write(&file, ECHO).unwrap();
    let file = file.to_str().unwrap();

    let same = harness(&["probe", file, "--adapter", env!("CARGO_BIN_EXE_dsh-reference-adapter")], &[]);
    let shown = String::from_utf8_lossy(&same.stdout);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same));
    assert!(shown.contains("== reference (in-process): PASS\n") && shown.contains("dsh-reference-adapter): PASS\n"), "{shown}");
    assert_eq!(shown.matches(r#"→ {"jsonrpc":"2.0","id":3,"method":"call/start","params":{"session":"probe","callId":"c1","name":"echo","arguments":{"text":"hi"}}}"#).count(), 2, "{shown}");
    assert!(shown.contains("== difference: none (the transcripts are identical)"), "{shown}");

    let fake = harness(&["probe", file, "--adapter", &fake_adapter(&dir), "--step-timeout", "5"], &[]);
    let shown = String::from_utf8_lossy(&fake.stdout);
    assert_eq!(fake.status.code(), Some(1), "{}", text(&fake));
    assert!(shown.contains("== reference (in-process): PASS\n") && shown.contains("fake_adapter.py'): "), "{shown}");
    let diff = &shown[shown.find("== difference (- reference, + adapter)\n--- reference\n+++ adapter\n").expect("a difference") ..];
    assert!(diff.contains(r#"-← {"jsonrpc":"2.0","method":"event","params":{"session":"probe","seq":1"#), "{diff}");
    assert!(diff.contains("unknown method call/start"), "{diff}");
}

#[test]
fn a_probe_that_does_not_load_says_where_and_counts_the_filled_in_lines() {
    let dir = temp_dir("probe-broken");
    let file = dir.join("bad.yaml");
    std::fs::write(&file, "steps:\n  - execute: { tool: echo }\n").unwrap();
    let out = harness(&["probe", file.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("does not load (lines counted with the 4 filled-in line(s) above the file's first)"), "{stdout}");
    assert!(stdout.contains("bad.yaml:6:") && stdout.contains("unknown field \"tool\""), "{stdout}");
    let missing = harness(&["probe", dir.join("nope.yaml").to_str().unwrap()], &[]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
}
