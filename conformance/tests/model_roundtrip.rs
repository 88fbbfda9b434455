//! Round-trip of the scenario model: every fixture and step form deserializes and serializes back to the
//! same JSON (the harness sends `setup` verbatim; the reference server reads it with the same types).

use dsh_conformance::scenario::{Action, ScenarioFile};
use serde_json::Value;

const FULL: &str = r#"
id: model-everything
rules: [REG-003]
level: must
profile: dsh-tools-0.1
requires: [agents]
description: every form
setup:
  mode: both
  maxParallelSubCalls: 4
  runtime: typescript
  approval: { answer: allowed-once, do: [{ wait: g1 }] }
  agents: [a1]
  tools:
    - name: echo
      handle: echo2
      agent: a1
      register: false
      description: Echo.
      parameters: { text: { type: string, required: true } }
      output: { schema: { type: string }, render: text, presentationMeta: { fromArguments: true } }
      timeoutMs: Infinity
      concurrency: { argument: a.b, equals: 1 }
      finalizeContent: { do: [{ emit: f }], appendText: x }
      body: [{ returnArgument: text }, { emit: e }, { wait: g }, { waitOrAbort: g }, { awaitAbort: true }, { emitSignal: s }, { deferContext: { text: t, source: s } }, { return: null }, { throw: { message: m, name: TypeError } }, { throw: plain }]
    - { name: t2, rawParameters: { type: object }, output: { schema: {}, render: { content: [{ type: text, text: hi }] } }, timeoutMs: 100, concurrency: throws }
    - { name: t3, output: { schema: {}, render: { invalid: true } }, concurrency: { returns: 1 } }
    - { name: t4, output: { schema: {}, render: { missing: true } }, concurrency: false, timeoutMs: 1.5 }
    - { name: t5, output: { schema: {}, render: { throw: boom }, presentationMeta: { value: null } }, finalizeContent: { keep: true } }
  hooks:
    preExecute:
      - { id: p1, decide: next }
      - { id: p2, decide: allow, tools: [echo], prepend: true }
      - { id: p3, decide: { deny: no } }
      - { id: p4, decide: { ask: null } }
      - { id: p5, decide: { afterNext: { throw: x } } }
    guards: [{ id: g1, deny: null }, { id: g2, deny: nope, agent: a1 }]
    execute:
      - { id: w1, around: next }
      - { id: w2, around: { replaceSignal: { abortOnGate: g } } }
      - { id: w3, around: { timeoutOnGate: g } }
      - { id: w4, around: { returnValue: null } }
      - { id: w5, around: { afterNext: [{ emit: x }] }, do: [{ emit: y }] }
    postExecute:
      - { id: q1, decide: accept }
      - { id: q2, decide: { accept: { value: null, additionalContexts: [{ text: c }] } } }
      - { id: q3, decide: { block: { feedback: [{ type: text, text: no }] } } }
    results: [{ id: r1, do: [{ throw: x }] }]
steps:
  - register: { tool: echo2, as: h1 }
    expect: { threw: { message: { $regex: "^tool" } } }
  - dispose: h1
  - addHook: { guards: { id: g3, deny: null }, as: h2 }
    expect: { ok: true }
  - restrict: { agent: a1, allow: [echo], as: m }
  - presentAs: { mode: code }
  - openAgent: a2
  - dropAgent: a2
  - get: { name: echo }
    expect: { tool: null }
  - schemas: {}
    expect: { names: [echo] }
  - executionMode: { name: echo, arguments: {} }
    expect: { mode: exclusive }
  - execute: { name: echo, arguments: { text: hi } }
    expect: { result: { isError: false, value: hi, content: [{ type: text, text: hi }] } }
  - start: { callId: c1, name: echo, arguments: {}, agent: a1, parent: c0, aborted: true }
  - abort: { callId: c1, reason: null }
  - await: c1
    expect: { resultIncludes: { isError: true } }
  - openGate: g
  - waitFor: body-started
  - events: [{ type: mark, label: e, callId: c1 }]
  - assemble: { agent: a1 }
    expect: { sections: { $any: true } }
  - renderSdk: { language: typescript, tools: [echo] }
    expect: { text: "x" }
"#;

fn roundtrip(yaml: &str) -> ScenarioFile {
    let value: Value = dsh_conformance::yaml::parse(yaml).expect("yaml").value;
    let file: ScenarioFile = serde_json::from_value(value.clone()).expect("deserialize");
    let back = serde_json::to_value(&file).expect("serialize");
    pretty_assertions::assert_eq!(value, back);
    file
}

#[test]
fn every_form_round_trips() {
    let file = roundtrip(FULL);
    let scenarios = file.into_scenarios();
    assert_eq!(scenarios.len(), 1);
    let s = &scenarios[0];
    assert_eq!(s.steps.len(), 19);
    assert!(matches!(s.steps[7].expect.as_ref().and_then(|e| e.tool.clone()), Some(Value::Null)));
    assert!(matches!(s.steps[2].action, Action::AddHook(_)));
}

#[test]
fn family_round_trips() {
    roundtrip("scenarios:\n  - { id: a, rules: [R-1], level: may, description: d }\n  - { id: b, rules: [R-1], level: should, description: d, steps: [{ openGate: g }] }\n");
}

#[test]
fn unknown_fields_are_errors() {
    for bad in [
        "{ id: a, rules: [R], level: must, description: d, steps: [{ get: { name: x }, expect: { thrw: {} } }] }",
        "{ id: a, rules: [R], level: must, description: d, setup: { tools: [{ name: x, bogus: 1 }] } }",
        "{ id: a, rules: [R], level: must, description: d, steps: [{ get: { name: x }, start: { name: y, arguments: {} } }] }",
        "{ id: a, rules: [R], level: must, description: d, setup: { hooks: { guards: [{ id: g }] } } }",
        "{ id: a, rules: [R], level: must, description: d, setup: { tools: [{ name: x, body: [{ emit: a, wait: b }] }] } }",
    ] {
        let value: Value = dsh_conformance::yaml::parse(bad).expect("yaml").value;
        assert!(serde_json::from_value::<ScenarioFile>(value).is_err(), "accepted: {bad}");
    }
}

#[test]
fn every_form_is_valid_under_the_published_schema() {
    let value = dsh_conformance::yaml::parse(FULL).expect("yaml").value;
    let validator = dsh_conformance::schemas::scenario().expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(&value).map(|e| format!("{}: {}", e.instance_path(), e.masked())).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(dsh_conformance::schemas::rules().is_ok());
}
