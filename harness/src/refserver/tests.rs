//! Unit tests of the server's private invariants: deep JSON, event order and `eventsThrough`, gates,
//! aborts and the leak report; [`calls`] holds those of the requests that drive calls through the
//! reference (registry, listeners, wrappers, approval, the in-process subject, transcripts).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::runtime;
use super::{Server, deep};

/// `[[[...0...]]]` `depth` levels deep, built without recursion.
pub(super) fn deep_array(depth: usize) -> Value {
    let mut v = json!(0);
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

fn depth_of(mut v: &Value) -> usize {
    let mut depth = 0;
    while let Some(inner) = v.as_array().and_then(|a| a.first()) {
        depth += 1;
        v = inner;
    }
    depth
}

/// A server whose sink and responses go into one ordered log, as both transports do.
pub(super) struct Harness {
    pub runtime: tokio::runtime::Runtime,
    pub server: Server,
    pub log: Arc<Mutex<Vec<Value>>>,
    next_id: u64,
}

impl Harness {
    pub fn new() -> Self {
        let log: Arc<Mutex<Vec<Value>>> = Arc::default();
        let sink = log.clone();
        let server = Server::new(move |n| sink.lock().unwrap_or_else(|p| p.into_inner()).push(n));
        Harness { runtime: runtime::build().expect("runtime"), server, log, next_id: 0 }
    }

    /// Sends one request; returns (events before the response, the response).
    pub fn call(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.next_id += 1;
        let request = deep::object([
            ("jsonrpc", "2.0".into()),
            ("id", self.next_id.into()),
            ("method", method.into()),
            ("params", params),
        ]);
        let (server, log) = (self.server.clone(), self.log.clone());
        let task = self.runtime.spawn(async move {
            server.handle_with(&request, |r| log.lock().unwrap_or_else(|p| p.into_inner()).push(r)).await;
            deep::dismantle(request);
        });
        self.runtime
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), task).await })
            .expect("no timeout")
            .expect("no panic");
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        let at = log.iter().position(|m| m.get("id").is_some()).expect("a response");
        let mut taken: Vec<Value> = log.drain(..=at).collect();
        let response = taken.pop().expect("response");
        (taken, response)
    }

    pub fn ok(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        let (events, mut response) = self.call(method, params);
        let result = response.get_mut("result").map(Value::take).unwrap_or_else(|| panic!("{method}: {response}"));
        (events, result)
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let server = self.server.clone();
        // On a runtime thread: sessions hold deep values.
        let _ = self.runtime.block_on(self.runtime.spawn(async move { server.close_all().await }));
        for v in self.log.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            deep::dismantle(v);
        }
    }
}

#[test]
fn deep_values_parse_write_clone_and_drop_on_a_small_stack() {
    // Run on a thread with a deliberately small stack: nothing here may recurse.
    let worker = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let line = format!("{}0{}", "[".repeat(100_000), "]".repeat(100_000));
            let v = deep::parse(&line).expect("parse");
            assert_eq!(depth_of(&v), 100_000);
            assert_eq!(deep::to_line(&v), line);
            let copy = deep::clone(&v);
            assert_eq!(depth_of(&copy), 100_000);
            deep::dismantle(copy);
            deep::dismantle(v);
        })
        .expect("spawn");
    worker.join().expect("no stack overflow");
}

#[test]
fn write_compact_matches_serde_json() {
    let v = json!({"b": [1, 2.5, "x\n\"y\"", null, true], "a": {"é": -0.0, "z": {}} , "c": []});
    assert_eq!(deep::to_line(&v), serde_json::to_string(&v).expect("to_string"));
}

#[test]
fn initialize_declares_the_reference() {
    let mut h = Harness::new();
    let (events, result) = h.ok("initialize", json!({ "protocolVersion": "1.0" }));
    assert!(events.is_empty());
    assert_eq!(result["protocolVersion"], "1.0");
    assert_eq!(result["implementation"]["language"], "rust");
    assert_eq!(result["capabilities"]["profiles"], json!(["dsh-tools-0.1", "dsh-codemode"]));
    for feature in ["execute-wrappers", "post-execute", "approval"] {
        assert!(result["capabilities"]["features"].as_array().is_some_and(|f| f.contains(&json!(feature))), "{feature}");
    }
    assert!(result.get("eventsThrough").is_none());
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let mut h = Harness::new();
    let (_, r) = h.call("no/such", json!({ "session": "s" }));
    assert!(r["error"]["code"].is_i64(), "{r}");
    let (_, r) = h.call("call/await", json!({ "session": "nope", "callId": "c" }));
    assert!(r["error"]["message"].as_str().is_some_and(|m| m.contains("nope")), "{r}");
    let (_, r) = h.call("session/open", json!({ "session": 5 }));
    assert_eq!(r["error"]["code"], json!(super::rpc::INVALID_PARAMS));
    for bad in [json!(null), json!([1]), json!({ "id": 1 }), json!({ "jsonrpc": "2.0", "id": {}, "method": "x" })] {
        let response = h.runtime.block_on(h.server.handle(bad));
        assert!(response["error"]["code"].is_i64(), "{response}");
    }
}

#[test]
fn sessions_open_once_and_close_with_an_empty_leak_report() {
    let mut h = Harness::new();
    let (_, r) = h.ok("session/open", json!({ "session": "s", "setup": {} }));
    assert_eq!(r, json!({ "eventsThrough": 0 }));
    let (_, again) = h.call("session/open", json!({ "session": "s", "setup": {} }));
    assert!(again.get("error").is_some());
    let (_, r) = h.ok("gate/open", json!({ "session": "s", "gate": "g" }));
    assert_eq!(r, json!({ "eventsThrough": 0 }));
    let (_, r) = h.ok("gate/open", json!({ "session": "s", "gate": "g" }));
    assert_eq!(r["eventsThrough"], 0);
    let (_, r) = h.ok("session/close", json!({ "session": "s" }));
    assert_eq!(r, json!({ "leaks": { "pendingCalls": [], "unopenedGates": [], "liveTasks": 0 }, "eventsThrough": 0 }));
    // Closed: reopening starts afresh.
    h.ok("session/open", json!({ "session": "s" }));
}

#[test]
fn gates_count_waiters_until_opened_or_abandoned() {
    let rt = runtime::build().expect("runtime");
    rt.block_on(async {
        let gates = super::gates::Gates::default();
        let waiter = {
            let gates = gates.clone();
            tokio::spawn(async move { gates.wait("g").await })
        };
        let signal = tokio_util::sync::CancellationToken::new();
        let aborter = {
            let (gates, signal) = (gates.clone(), signal.clone());
            tokio::spawn(async move { gates.wait_or_abort("h", Some(&signal)).await })
        };
        while gates.unopened_waited() != ["g", "h"] {
            tokio::task::yield_now().await;
        }
        signal.cancel();
        assert_eq!(aborter.await.expect("join"), super::gates::Woken::Aborted);
        assert_eq!(gates.unopened_waited(), ["g"]);
        gates.open("g");
        waiter.await.expect("join");
        assert!(gates.unopened_waited().is_empty());
        assert!(gates.is_open("g"));
        // An open gate does not block.
        gates.wait("g").await;
    });
}

fn tool(name: &str, body: Value) -> Value {
    json!({ "name": name, "rawParameters": {}, "output": { "schema": {}, "render": "json" }, "body": body })
}

fn open(h: &mut Harness, setup: Value) {
    let (_, response) = h.call("session/open", json!({ "session": "s", "setup": setup }));
    assert!(response.get("result").is_some(), "{response}");
}

fn seqs(events: &[Value]) -> Vec<u64> {
    events.iter().filter_map(|e| e["params"]["seq"].as_u64()).collect()
}

#[test]
fn events_precede_the_response_that_counts_them() {
    let mut h = Harness::new();
    open(&mut h, json!({ "tools": [tool("t", json!([{ "emit": "a" }, { "wait": "g" }, { "emit": "b" }, { "return": "x" }]))] }));
    let (events, r) = h.ok("call/start", json!({ "session": "s", "callId": "c", "name": "t", "arguments": {} }));
    // The body ran to its first wait before call/start answered.
    assert_eq!(seqs(&events), [1]);
    assert_eq!(events[0]["params"]["event"], json!({ "type": "mark", "label": "a", "callId": "c" }));
    assert_eq!(r["eventsThrough"], 1);
    // Opening the gate lets the body run to its end before gate/open answers (quiescence).
    let (woken, r) = h.ok("gate/open", json!({ "session": "s", "gate": "g" }));
    assert_eq!(seqs(&woken), [2, 3]);
    assert_eq!(woken[0]["params"]["event"], json!({ "type": "mark", "label": "b", "callId": "c" }));
    assert_eq!(r["eventsThrough"], 3);
    let (more, r) = h.ok("call/await", json!({ "session": "s", "callId": "c" }));
    assert!(more.is_empty());
    assert_eq!(r["eventsThrough"], 3);
    assert_eq!(r["result"], json!({ "isError": false, "value": "x", "content": [{ "type": "text", "text": "\"x\"" }] }));
    assert_eq!(woken[1]["params"]["event"], json!({ "type": "result", "callId": "c", "result": r["result"].clone() }));
}

#[test]
fn aborts_cancel_the_caller_signal_and_pre_aborted_calls_never_dispatch() {
    let mut h = Harness::new();
    open(&mut h, json!({ "tools": [tool("t", json!([{ "awaitAbort": true }, { "emitSignal": "after" }]))] }));
    h.ok("call/start", json!({ "session": "s", "callId": "c", "name": "t", "arguments": {} }));
    let (events, _) = h.ok("call/abort", json!({ "session": "s", "callId": "c", "reason": "stop" }));
    let (_, r) = h.ok("call/await", json!({ "session": "s", "callId": "c" }));
    assert_eq!(r["result"]["error"]["code"], "ABORTED", "{}", r["result"]);
    assert!(events.iter().any(|e| e["params"]["event"] == json!({ "type": "mark", "label": "after", "callId": "c", "aborted": true })));
    h.ok("call/start", json!({ "session": "s", "callId": "d", "name": "t", "arguments": {}, "aborted": true }));
    let (_, r) = h.ok("call/await", json!({ "session": "s", "callId": "d" }));
    assert_eq!(r["result"]["error"]["code"], "ABORTED_BEFORE_DISPATCH", "{}", r["result"]);
    let (_, r) = h.call("call/abort", json!({ "session": "s", "callId": "nope" }));
    assert!(r.get("error").is_some());
    let (_, r) = h.ok("session/close", json!({ "session": "s" }));
    assert_eq!(r["leaks"], json!({ "pendingCalls": [], "unopenedGates": [], "liveTasks": 0 }));
}

#[test]
fn wait_or_abort_wakes_on_either() {
    let mut h = Harness::new();
    open(&mut h, json!({ "tools": [tool("t", json!([{ "waitOrAbort": "g" }, { "emitSignal": "woke" }, { "return": 1 }]))] }));
    h.ok("call/start", json!({ "session": "s", "callId": "a", "name": "t", "arguments": {} }));
    h.ok("call/start", json!({ "session": "s", "callId": "b", "name": "t", "arguments": {} }));
    h.ok("call/abort", json!({ "session": "s", "callId": "a" }));
    let (_, r) = h.ok("call/await", json!({ "session": "s", "callId": "a" }));
    assert_eq!(r["result"]["error"]["code"], "ABORTED");
    h.ok("gate/open", json!({ "session": "s", "gate": "g" }));
    let (_, r) = h.ok("call/await", json!({ "session": "s", "callId": "b" }));
    assert_eq!(r["result"]["value"], 1);
}

#[test]
fn the_leak_report_names_pending_calls_waited_gates_and_live_tasks() {
    let mut h = Harness::new();
    open(&mut h, json!({ "tools": [tool("t", json!([{ "wait": "never" }]))] }));
    h.ok("call/start", json!({ "session": "s", "callId": "c", "name": "t", "arguments": {} }));
    let (_, r) = h.ok("session/close", json!({ "session": "s" }));
    assert_eq!(r["leaks"], json!({ "pendingCalls": ["c"], "unopenedGates": ["never"], "liveTasks": 1 }));
    // The session is gone: its requests are errors, and its id opens afresh.
    let (_, r) = h.call("call/await", json!({ "session": "s", "callId": "c" }));
    assert!(r.get("error").is_some());
    open(&mut h, json!({}));
}

#[test]
fn parents_are_tokens_seen_by_the_pipeline() {
    let mut h = Harness::new();
    open(&mut h, json!({ "tools": [tool("t", json!([{ "wait": "g" }]))] }));
    let (_, r) = h.call("call/start", json!({ "session": "s", "callId": "child", "name": "t", "arguments": {}, "parent": "p" }));
    assert!(r["error"]["message"].as_str().is_some_and(|m| m.contains("\"p\"")), "{r}");
    h.ok("call/start", json!({ "session": "s", "callId": "p", "name": "t", "arguments": {} }));
    h.ok("call/start", json!({ "session": "s", "callId": "child", "name": "t", "arguments": {}, "parent": "p" }));
    h.ok("gate/open", json!({ "session": "s", "gate": "g" }));
    h.ok("call/await", json!({ "session": "s", "callId": "child" }));
    h.ok("call/await", json!({ "session": "s", "callId": "p" }));
}

mod calls;
