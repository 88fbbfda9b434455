//! Unit tests of the requests that drive calls through the reference: registry requests and outcomes,
//! change listeners, wrappers and post-execute hooks, gate timeouts, approval, deep arguments, the
//! in-process subject and transcript lines. Helpers come from the parent test module.

use serde_json::{Value, json};

use super::*;

#[test]
fn registry_requests_and_outcomes() {
    let mut h = Harness::new();
    let dsl = json!({
        "name": "echo", "parameters": { "text": { "type": "string", "required": true } },
        "output": { "schema": { "type": "string" }, "render": "text" }, "body": [{ "returnArgument": "text" }],
    });
    let late = json!({ "name": "late", "register": false, "rawParameters": {}, "output": { "schema": {}, "render": "text" } });
    open(&mut h, json!({ "agents": ["a1"], "tools": [dsl, late], "hooks": {
        "preExecute": [{ "id": "p", "tools": ["echo"], "do": [{ "emit": "pre" }], "decide": { "afterNext": "next" } }],
        "guards": [{ "id": "g", "tools": ["late"], "deny": "no late" }],
        "results": [{ "id": "r", "do": [{ "emit": "seen" }] }],
    } }));
    let (_, r) = h.ok("tools/register", json!({ "session": "s", "tool": "echo" }));
    assert_eq!(r["outcome"]["threw"]["name"], "Error", "{r}");
    let (_, r) = h.ok("tools/register", json!({ "session": "s", "tool": "late" }));
    assert_eq!(r["outcome"], json!({ "ok": true }));
    let (_, r) = h.ok("tools/schemas", json!({ "session": "s", "agent": "a1" }));
    let names: Vec<&str> = r["schemas"].as_array().into_iter().flatten().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["echo", "late"]);
    let (_, r) = h.ok("tools/get", json!({ "session": "s", "name": "nope" }));
    assert_eq!(r["tool"], Value::Null);
    let (_, r) = h.ok("tools/executionMode", json!({ "session": "s", "name": "echo", "arguments": {} }));
    assert_eq!(r["mode"], "exclusive");
    let (mut events, _) = h.ok("call/start", json!({ "session": "s", "callId": "c1", "name": "echo", "arguments": { "text": "hi" } }));
    let (more, r) = h.ok("call/await", json!({ "session": "s", "callId": "c1" }));
    events.extend(more);
    assert_eq!(r["result"], json!({ "isError": false, "value": "hi", "content": [{ "type": "text", "text": "hi" }] }));
    let kinds: Vec<Value> = events.iter().map(|e| e["params"]["event"]["label"].clone()).collect();
    // The subject's own result observer was registered first.
    assert_eq!(kinds, [json!("pre"), json!("p:next"), Value::Null, json!("seen")], "{events:?}");
    h.ok("call/start", json!({ "session": "s", "callId": "c2", "name": "late", "arguments": {} }));
    let (_, r) = h.ok("call/await", json!({ "session": "s", "callId": "c2" }));
    assert_eq!(r["result"]["error"], json!({ "message": "no late" }));
    h.ok("handle/dispose", json!({ "session": "s", "handle": "g" }));
    h.ok("scope/drop", json!({ "session": "s", "agent": "a1" }));
    // A handle stays valid: disposing it again is a no-op; an unknown one is an error.
    let (_, r) = h.call("handle/dispose", json!({ "session": "s", "handle": "g" }));
    assert!(r.get("result").is_some(), "{r}");
    let (_, r) = h.call("handle/dispose", json!({ "session": "s", "handle": "never" }));
    assert!(r.get("error").is_some());
}

#[test]
fn change_listeners_see_effective_registry_changes() {
    let mut h = Harness::new();
    let mut echo = tool("echo", json!([]));
    echo["register"] = json!(false);
    open(&mut h, json!({ "tools": [echo], "hooks": { "changes": [{ "id": "watch", "do": [{ "emit": "changed" }] }] } }));
    let (events, _) = h.ok("tools/register", json!({ "session": "s", "tool": "echo" }));
    assert_eq!(labels(&events), [json!("changed")]);
    let (events, _) = h.ok("handle/dispose", json!({ "session": "s", "handle": "echo" }));
    assert_eq!(labels(&events), [json!("changed")]);
    let (events, _) = h.ok("handle/dispose", json!({ "session": "s", "handle": "echo" }));
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn what_dsh_tools_lacks_is_an_error_naming_it() {
    let mut h = Harness::new();
    let (_, r) = h.call("session/open", json!({ "session": "s", "setup": { "mode": "code", "runtime": "ruby" } }));
    assert!(r["error"]["message"].as_str().is_some_and(|m| m.contains("ruby")), "{r}");
    let (_, r) = h.call("session/open", json!({ "session": "s", "setup": { "maxParallelSubCalls": 0 } }));
    assert_eq!(r["error"]["code"], json!(super::super::rpc::SETUP_REJECTED), "{r}");
    assert!(r["error"]["message"].as_str().is_some_and(|m| m.contains("maxParallelSubCalls must be a positive integer")), "{r}");
    open(&mut h, json!({}));
    let (_, r) = h.ok("sdk/render", json!({ "session": "s", "language": "typescript", "tools": [] }));
    assert!(r["text"].as_str().is_some_and(|t| t.contains("run_code")), "{r}");
    let (_, r) = h.ok("sdk/render", json!({ "session": "s", "language": "python", "tools": [5] }));
    assert_eq!(r["outcome"]["threw"]["name"], "TypeError", "{r}");
    let (_, r) = h.call("hooks/add", json!({ "session": "s", "kind": "guards", "listener": { "id": "x", "do": [{ "wait": "g" }], "deny": null } }));
    assert_eq!(r["error"]["code"], json!(super::super::rpc::UNSUPPORTED), "{r}");
    let (_, r) = h.call("hooks/add", json!({ "session": "s", "kind": "results", "listener": { "id": "x", "do": [{ "nope": 1 }] } }));
    assert_eq!(r["error"]["code"], json!(super::super::rpc::INVALID_PARAMS), "{r}");
    let (_, r) = h.call("hooks/add", json!({ "session": "s", "kind": "guards", "listener": { "id": "x", "prepend": true, "deny": null } }));
    assert_eq!(r["error"]["code"], json!(super::super::rpc::INVALID_PARAMS), "{r}");
}

fn labels(events: &[Value]) -> Vec<Value> {
    events.iter().map(|e| e["params"]["event"]["label"].clone()).collect()
}

fn run_call(h: &mut Harness, call_id: &str, name: &str, arguments: Value) -> (Vec<Value>, Value) {
    let (mut events, _) = h.ok("call/start", json!({ "session": "s", "callId": call_id, "name": name, "arguments": arguments }));
    let (more, r) = h.ok("call/await", json!({ "session": "s", "callId": call_id }));
    events.extend(more);
    (events, r["result"].clone())
}

#[test]
fn wrappers_post_execute_prepend_and_throwing_guards() {
    let mut h = Harness::new();
    open(&mut h, json!({
        "tools": [tool("echo", json!([{ "emit": "body" }, { "returnArgument": "" }]))],
        "hooks": {
            "preExecute": [{ "id": "pre", "do": [{ "emit": "pre" }], "decide": "next" },
                           { "id": "first", "prepend": true, "do": [{ "emit": "first" }], "decide": "next" }],
            "guards": [{ "id": "g", "tools": ["nothing"], "deny": null }],
            "execute": [{ "id": "w", "do": [{ "emit": "w" }], "around": { "afterNext": [{ "emit": "w:after" }] } },
                        { "id": "c", "around": { "cachedFrom": "c1" } }],
            "postExecute": [{ "id": "post", "do": [{ "emit": "post" }], "decide": { "accept": { "content": [{ "type": "text", "text": "P" }] } } }],
        },
    }));
    let (events, r) = run_call(&mut h, "c1", "echo", json!({ "a": 1 }));
    assert_eq!(r, json!({ "isError": false, "value": { "a": 1 }, "content": [{ "type": "text", "text": "P" }] }));
    let want = [json!("first"), json!("pre"), json!("w"), json!("body"), json!("w:after"), json!("post"), Value::Null];
    assert_eq!(labels(&events), want, "{events:?}");
    // The cache replays c1's result for c2 (revalidated and re-rendered), without running the body.
    let (events, r) = run_call(&mut h, "c2", "echo", json!({ "a": 2 }));
    assert_eq!(r["value"], json!({ "a": 1 }), "{r}");
    assert!(!labels(&events).contains(&json!("body")));
    let (_, r) = h.ok("hooks/add", json!({ "session": "s", "kind": "guards", "listener": { "id": "boom", "do": [{ "throw": "guard blew" }], "deny": null } }));
    assert_eq!(r["outcome"], json!({ "ok": true }));
    let (events, r) = run_call(&mut h, "c3", "echo", json!({}));
    assert_eq!(r["error"], json!({ "message": "guard blew" }), "{r}");
    assert!(!labels(&events).contains(&json!("post")), "final: {events:?}");
}

#[test]
fn timeout_on_gate_and_wait_for_marks() {
    let mut h = Harness::new();
    open(&mut h, json!({
        "tools": [tool("slow", json!([{ "emit": "entered" }, { "awaitAbort": true }, { "emitSignal": "left" }, { "return": 1 }]))],
        "hooks": { "execute": [{ "id": "t", "around": { "timeoutOnGate": "deadline" } }] },
    }));
    h.ok("call/start", json!({ "session": "s", "callId": "c1", "name": "slow", "arguments": {} }));
    h.ok("events/waitFor", json!({ "session": "s", "label": "entered" }));
    // Already sent: answered at once.
    h.ok("events/waitFor", json!({ "session": "s", "label": "entered" }));
    h.ok("gate/open", json!({ "session": "s", "gate": "deadline" }));
    let (_, r) = h.ok("call/await", json!({ "session": "s", "callId": "c1" }));
    assert_eq!(
        r["result"],
        json!({ "isError": true, "error": { "message": "tool \"slow\" timed out", "code": "TOOL_TIMEOUT", "name": "ToolTimeoutError" },
                "content": [{ "type": "text", "text": "Error: tool \"slow\" timed out" }] })
    );
    let (_, r) = h.ok("session/close", json!({ "session": "s" }));
    assert_eq!(r["leaks"], json!({ "pendingCalls": [], "unopenedGates": [], "liveTasks": 0 }));
}

#[test]
fn approval_answers_asks_of_agents() {
    let mut h = Harness::new();
    open(&mut h, json!({
        "agents": ["a1"],
        "approval": { "answer": "rejected", "do": [{ "emit": "asked" }] },
        "tools": [tool("echo", json!([{ "return": 1 }]))],
        "hooks": { "preExecute": [{ "id": "ask", "decide": { "ask": null } }] },
    }));
    let (events, _) = h.ok("call/start", json!({ "session": "s", "callId": "c1", "name": "echo", "arguments": {}, "agent": "a1" }));
    assert_eq!(labels(&events)[0], json!("asked"));
    let (_, r) = h.ok("call/await", json!({ "session": "s", "callId": "c1" }));
    assert_eq!(r["result"]["error"], json!({ "message": "the user rejected tool \"echo\"" }));
    let (_, r) = h.ok("scope/restrict", json!({ "session": "s", "agent": "a1", "deny": ["echo"], "as": "m" }));
    assert_eq!(r["outcome"], json!({ "ok": true }));
    let (_, r) = h.ok("tools/get", json!({ "session": "s", "name": "echo", "agent": "a1" }));
    assert_eq!(r["tool"], Value::Null);
    h.ok("handle/dispose", json!({ "session": "s", "handle": "m" }));
    let (_, r) = h.ok("tools/get", json!({ "session": "s", "name": "echo", "agent": "a1" }));
    assert_eq!(r["tool"]["name"], "echo");
}

#[test]
fn approval_without_an_answerer_is_alone_and_answers_unavailable() {
    let mut h = Harness::new();
    for (session, approval) in [
        ("both", json!({ "answer": "rejected", "answerer": "none" })),
        ("with-do", json!({ "answerer": "none", "do": [] })),
        ("neither", json!({})),
    ] {
        let (_, response) = h.call("session/open", json!({ "session": session, "setup": { "approval": approval } }));
        assert_eq!(response["error"]["code"], json!(-32602), "{session}: {response}");
    }
    open(&mut h, json!({
        "agents": ["a1"],
        "approval": { "answerer": "none" },
        "tools": [tool("echo", json!([{ "return": 1 }]))],
        "hooks": { "preExecute": [{ "id": "ask", "decide": { "ask": "why" } }] },
    }));
    h.ok("call/start", json!({ "session": "s", "callId": "c1", "name": "echo", "arguments": {}, "agent": "a1" }));
    let (_, r) = h.ok("call/await", json!({ "session": "s", "callId": "c1" }));
    let expected = "tool \"echo\" requires approval, but no approval channel is available";
    assert_eq!(r["result"]["error"], json!({ "message": expected }));
}

#[test]
fn a_100000_deep_argument_comes_back_through_the_server() {
    let mut h = Harness::new();
    open(&mut h, json!({ "tools": [tool("echo", json!([{ "returnArgument": "" }]))] }));
    let start = deep::object([
        ("session", "s".into()),
        ("callId", "c".into()),
        ("name", "echo".into()),
        ("arguments", deep_array(100_000)),
    ]);
    // The body returns at once: its result event may already precede call/start's answer.
    let (mut events, _) = h.ok("call/start", start);
    let (more, r) = h.ok("call/await", json!({ "session": "s", "callId": "c" }));
    events.extend(more);
    assert_eq!(r["result"]["isError"], false);
    assert_eq!(depth_of(&r["result"]["value"]), 100_000);
    let event = events.last().map(|e| &e["params"]["event"]["result"]["value"]).expect("result event");
    assert_eq!(depth_of(event), 100_000);
    // Deep values go down iteratively: the test thread's stack is small.
    for v in events {
        deep::dismantle(v);
    }
    deep::dismantle(r);
}

#[test]
fn the_in_process_subject_answers_like_the_protocol_and_keeps_a_transcript() {
    use dsh_conformance::subject::Subject;
    let mut subject = super::super::ReferenceSubject::new().expect("subject");
    let info = subject.initialize().expect("initialize");
    assert_eq!(info.language, "rust");
    assert_eq!(info.features, super::super::capabilities::FEATURES);
    let t = Duration::from_secs(10);
    let setup = json!({ "tools": [tool("t", json!([{ "emit": "x" }, { "return": [1] }]))] });
    subject.request("session/open", json!({ "session": "s", "setup": setup }), t).expect("open");
    let started = subject.request("call/start", json!({ "session": "s", "callId": "c", "name": "t", "arguments": {} }), t).expect("start");
    let mut events = started.events;
    let awaited = subject.request("call/await", json!({ "session": "s", "callId": "c" }), t).expect("await");
    events.extend(awaited.events);
    let result = awaited.result.expect("ok");
    assert_eq!(result["result"]["value"], json!([1]));
    assert_eq!(events.iter().map(|e| e["seq"].clone()).collect::<Vec<_>>(), [json!(1), json!(2)]);
    assert_eq!(result["eventsThrough"], 2);
    let error = subject.request("no/such", json!({ "session": "s" }), t).expect("reply").result;
    assert!(error.is_err());
    let lines = subject.take_transcript();
    assert!(lines.first().is_some_and(|l| l.starts_with("→ {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"")), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("← {\"jsonrpc\":\"2.0\",\"method\":\"event\"")));
    assert!(subject.take_transcript().is_empty());
    subject.restart().expect("restart");
    subject.initialize().expect("initialize after restart");
    let reopened = subject.request("session/open", json!({ "session": "s" }), t).expect("open");
    assert!(reopened.result.is_ok(), "a restart drops old sessions");
}

#[test]
fn a_stuck_request_times_out_in_process() {
    use dsh_conformance::subject::{Subject, SubjectError};
    let mut subject = super::super::ReferenceSubject::new().expect("subject");
    let t = Duration::from_secs(10);
    let setup = json!({ "tools": [tool("t", json!([{ "wait": "g" }]))] });
    subject.request("session/open", json!({ "session": "s", "setup": setup }), t).expect("open");
    subject.request("call/start", json!({ "session": "s", "callId": "c", "name": "t", "arguments": {} }), t).expect("start");
    let stuck = subject.request("call/await", json!({ "session": "s", "callId": "c" }), Duration::from_millis(100));
    assert!(matches!(stuck, Err(SubjectError::Timeout { .. })), "{stuck:?}");
    subject.restart().expect("restart");
}

#[test]
fn transcripts_cut_long_lines() {
    let mut t = super::super::transcript::Transcript::default();
    t.received(json!({ "big": "x".repeat(10_000) }));
    let lines = t.take();
    assert!(lines[0].len() < super::super::transcript::MAX_LINE + 100 && lines[0].contains("truncated"), "{}", lines[0].len());
}
