//! The checker against a scripted subject: PASS, FAIL with a readable diff, ERROR(adapter) for
//! protocol breaches (seq gaps, schema violations, eventsThrough ahead of the events), TIMEOUT, leaks,
//! and SKIP(not-applicable) without opening a session.

use std::time::Duration;

use dsh_conformance::checker::{CheckOptions, check_trial, run_scenario};
use dsh_conformance::outcome::{ErrorKind, Outcome, SkipKind};
use dsh_conformance::scenario::Scenario;
use dsh_conformance::subject::{Reply, RpcError, Subject, SubjectError, SubjectInfo};
use serde_json::{Value, json};

type Script = Box<dyn FnMut(&str, &Value) -> Result<(Result<Value, RpcError>, Vec<Value>), SubjectError> + Send>;

struct Scripted {
    script: Script,
    sent: Vec<String>,
}

impl Subject for Scripted {
    fn initialize(&mut self) -> Result<SubjectInfo, SubjectError> {
        Ok(info())
    }
    fn request(&mut self, method: &str, params: Value, _timeout: Duration) -> Result<Reply, SubjectError> {
        self.sent.push(format!("→ {method} {params}"));
        let (result, events) = (self.script)(method, &params)?;
        Ok(Reply { result, events })
    }
    fn restart(&mut self) -> Result<(), SubjectError> {
        Ok(())
    }
    fn take_transcript(&mut self) -> Vec<String> {
        std::mem::take(&mut self.sent)
    }
}

fn info() -> SubjectInfo {
    SubjectInfo {
        protocol_version: "1.0".into(),
        name: "scripted".into(),
        version: "0".into(),
        language: "rust".into(),
        profiles: vec!["dsh-tools-0.1".into()],
        features: vec![],
        runtimes: vec![],
    }
}

fn scenario(yaml: &str) -> Scenario {
    let value = dsh_conformance::yaml::parse(yaml).expect("yaml").value;
    serde_json::from_value(value).expect("scenario")
}

const ECHO: &str = "\
id: echo-once
rules: [REG-001]
level: must
description: d
setup:
  tools: [{ name: echo, body: [{ emit: ran }, { returnArgument: text }] }]
steps:
  - register: { tool: echo }
    expect: { threw: { message: { $regex: 'already registered$' } } }
  - execute: { name: echo, arguments: { text: hi } }
    expect:
      result: { isError: false, value: hi, content: [{ type: text, text: hi }] }
  - events:
      - { type: mark, label: ran, callId: call-1 }
      - { type: result, callId: call-1, result: { $any: true } }
";

/// A well-behaved subject for ECHO; `tweak` may change a reply.
fn echo_subject(mut tweak: impl FnMut(&str, &mut Value, &mut Vec<Value>) + Send + 'static) -> Scripted {
    let mut seq = 0u64;
    let script: Script = Box::new(move |method, params| {
        let mut events = Vec::new();
        let mut result = match method {
            "session/open" => json!({}),
            "tools/register" => json!({ "outcome": { "threw": { "message": "tool \"echo\" is already registered" } } }),
            "call/start" => {
                let id = params["callId"].clone();
                seq += 1;
                events.push(json!({ "session": "echo-once", "seq": seq, "event": { "type": "mark", "label": "ran", "callId": id } }));
                json!({})
            }
            "call/await" => {
                let r = json!({ "isError": false, "value": "hi", "content": [{ "type": "text", "text": "hi" }] });
                seq += 1;
                events.push(json!({ "session": "echo-once", "seq": seq, "event": { "type": "result", "callId": params["callId"], "result": r } }));
                json!({ "result": r })
            }
            "session/close" => json!({ "leaks": { "pendingCalls": [], "unopenedGates": [], "liveTasks": 0 } }),
            other => return Err(SubjectError::Protocol { message: format!("unexpected {other}") }),
        };
        if let Value::Object(m) = &mut result {
            m.insert("eventsThrough".into(), json!(seq));
        }
        tweak(method, &mut result, &mut events);
        Ok((Ok(result), events))
    });
    Scripted { script, sent: Vec::new() }
}

fn run(subject: &mut Scripted, yaml: &str) -> Outcome {
    run_scenario(subject, &scenario(yaml), &CheckOptions::default()).outcome
}

#[test]
fn passes() {
    let mut s = echo_subject(|_, _, _| {});
    let record = run_scenario(&mut s, &scenario(ECHO), &CheckOptions::default());
    assert_eq!(record.outcome, Outcome::Pass);
    assert!(!record.restart_needed);
    // A PASS's transcript is left with the subject, unrendered, for the caller to discard or take.
    assert!(record.transcript.is_empty());
    let transcript = s.take_transcript();
    let methods: Vec<&str> = transcript.iter().map(|l| l.split(' ').nth(1).unwrap_or("")).collect();
    assert_eq!(methods, ["session/open", "tools/register", "call/start", "call/await", "session/close"]);
    assert!(transcript[0].contains(r#""session":"echo-once""#));
}

#[test]
fn result_mismatch_fails_with_step_and_diff() {
    let mut s = echo_subject(|method, result, _| {
        if method == "call/await" {
            result["result"]["content"][0]["text"] = json!("ho");
        }
    });
    let Outcome::Fail { message } = run(&mut s, ECHO) else { panic!("not a FAIL") };
    assert!(message.starts_with("step 2 (execute "), "{message}");
    assert!(message.contains(r#"result.content[0].text: expected "hi", got "ho""#), "{message}");
    assert!(message.contains("-      \"text\": \"hi\"\n+      \"text\": \"ho\""), "{message}");
}

#[test]
fn unexpected_throw_fails() {
    let mut s = echo_subject(|method, result, _| {
        if method == "tools/register" {
            result["outcome"] = json!({ "ok": true });
        }
    });
    let Outcome::Fail { message } = run(&mut s, ECHO) else { panic!("not a FAIL") };
    assert!(message.contains("step 1 (register") && message.contains("expected it to throw"), "{message}");
}

#[test]
fn seq_gap_is_an_adapter_error() {
    let mut s = echo_subject(|method, result, events| {
        if method == "call/await" {
            events[0]["seq"] = json!(5);
            result["eventsThrough"] = json!(5);
        }
    });
    let Outcome::Error { kind: ErrorKind::Adapter, message } = run(&mut s, ECHO) else { panic!("not ERROR(adapter)") };
    assert!(message.contains("gap in event seq: got 5 after 1"), "{message}");
}

#[test]
fn events_through_ahead_is_an_adapter_error() {
    let mut s = echo_subject(|method, result, events| {
        if method == "call/await" {
            events.clear();
            result["eventsThrough"] = json!(2);
        }
    });
    let Outcome::Error { kind: ErrorKind::Adapter, message } = run(&mut s, ECHO) else { panic!("not ERROR(adapter)") };
    assert!(message.contains("eventsThrough 2"), "{message}");
}

#[test]
fn schema_violation_is_an_adapter_error() {
    let mut s = echo_subject(|method, result, _| {
        if method == "call/await" {
            result["result"]["isError"] = json!("no");
        }
    });
    let Outcome::Error { kind: ErrorKind::Adapter, message } = run(&mut s, ECHO) else { panic!("not ERROR(adapter)") };
    assert!(message.contains("call/await") && message.contains("/result/isError"), "{message}");
}

#[test]
fn wrong_events_fail() {
    let mut s = echo_subject(|method, _, events| {
        if method == "call/start" {
            events[0]["event"]["label"] = json!("other");
        }
    });
    let Outcome::Fail { message } = run(&mut s, ECHO) else { panic!("not a FAIL") };
    assert!(message.starts_with("step 3 (events ") && message.contains("events[0].label"), "{message}");
}

#[test]
fn leaks_fail() {
    let mut s = echo_subject(|method, result, _| {
        if method == "session/close" {
            result["leaks"] = json!({ "pendingCalls": ["call-1"], "unopenedGates": ["g"], "liveTasks": 1 });
        }
    });
    let Outcome::Fail { message } = run(&mut s, ECHO) else { panic!("not a FAIL") };
    assert!(message.contains(r#"pending calls ["call-1"], live tasks 1"#), "{message}");
}

#[test]
fn timeout_names_the_step_and_asks_for_a_restart() {
    let script: Script = Box::new(|method, _| match method {
        "session/open" => Ok((Ok(json!({ "eventsThrough": 0 })), vec![])),
        _ => Err(SubjectError::Timeout { method: method.into(), waited: Duration::from_secs(10) }),
    });
    let mut s = Scripted { script, sent: Vec::new() };
    let record = run_scenario(&mut s, &scenario(ECHO), &CheckOptions::default());
    assert!(matches!(&record.outcome, Outcome::Timeout { step, .. } if step.starts_with("step 1 (register") && step.ends_with(": tools/register")), "{:?}", record.outcome);
    assert!(record.restart_needed);
}

#[test]
fn misplaced_expectation_is_a_scenario_error() {
    let yaml = "id: echo-once\nrules: [R-001]\nlevel: must\ndescription: d\nsteps:\n  - openGate: g\n    expect: { ok: true }\n";
    let script: Script = Box::new(|method, _| match method {
        "session/close" => Ok((Ok(json!({ "eventsThrough": 0, "leaks": { "pendingCalls": [], "unopenedGates": [], "liveTasks": 0 } })), vec![])),
        _ => Ok((Ok(json!({ "eventsThrough": 0 })), vec![])),
    });
    let mut s = Scripted { script, sent: Vec::new() };
    assert!(matches!(run(&mut s, yaml), Outcome::Error { kind: ErrorKind::Scenario, .. }));
}

#[test]
fn missing_feature_skips_without_a_session() {
    let yaml = "id: s\nrules: [R-001]\nlevel: must\ndescription: d\nsteps: [{ assemble: {} }]\n";
    let mut s = echo_subject(|_, _, _| {});
    let record = check_trial(&mut s, &info(), &scenario(yaml), &CheckOptions::default());
    assert_eq!(record.outcome, Outcome::Skip { kind: SkipKind::NotApplicable, reason: "subject lacks prompt".into() });
    assert!(s.sent.is_empty());
}
