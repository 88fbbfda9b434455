//! `AdapterSubject` on its own, against a fake echo adapter: values 100,000 levels deep cross both ways,
//! events are handed out with the next reply, JSON-RPC errors are replies, a response to the wrong id is a
//! protocol error, and `restart` gives a working process again.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod common;

use std::time::Duration;

use dsh_conformance::subject::{Subject, SubjectError};
use dsh_harness::adapter::AdapterSubject;
use serde_json::{Value, json};

/// Echoes `params` back as the result (textually, so depth does not matter); `emit` sends two events first; `fail` answers with an error;
/// `wrongid` answers with another id.
const ECHO: &str = r#"
import json, re, sys
# Never json.loads a whole request: CPython's parser overflows its C stack on deep values.
for line in sys.stdin:
    line = line.rstrip("\n")
    head = re.match(r'\{"jsonrpc":"2.0","id":(\d+),"method":"([^"]*)","params":', line)
    req, m = {"id": int(head.group(1))}, head.group(2)
    def send(x): sys.stdout.write(json.dumps(x) + "\n"); sys.stdout.flush()
    if m == "initialize":
        send({"jsonrpc": "2.0", "id": req["id"], "result": {"protocolVersion": "1.0",
              "implementation": {"name": "echo", "version": "1", "language": "python"},
              "capabilities": {"profiles": ["dsh-tools-0.1"], "features": ["agents"], "runtimes": []}}})
    elif m == "emit":
        for seq in (1, 2):
            send({"jsonrpc": "2.0", "method": "event", "params": {"session": "s", "seq": seq, "event": {"type": "mark", "label": str(seq)}}})
        send({"jsonrpc": "2.0", "id": req["id"], "result": {"eventsThrough": 2}})
    elif m == "fail":
        send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "no"}})
    elif m == "wrongid":
        send({"jsonrpc": "2.0", "id": req["id"] + 100, "result": {}})
    else:
        sys.stdout.write('{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (req["id"], line[head.end():-1])); sys.stdout.flush()
"#;

/// The echo adapter, written into a directory of the test's own (`test`): the tests run in parallel, and a
/// restart spawns the script again, so a shared directory another test recreates would lose it.
fn echo(test: &str) -> AdapterSubject {
    let dir = common::temp_dir(&format!("adapter-unit-{test}"));
    let path = dir.join("echo.py");
    std::fs::write(&path, ECHO).unwrap();
    AdapterSubject::spawn(&format!("python3 -u '{}'", path.display()), Duration::from_secs(10)).unwrap()
}

/// Runs `f` on a thread with a large stack (deep values drop recursively).
fn big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(512 << 20).spawn(f).unwrap().join().unwrap();
}

#[test]
fn initialize_reads_capabilities() {
    let mut subject = echo("initialize_reads_capabilities");
    let info = subject.initialize().unwrap();
    assert_eq!((info.name.as_str(), info.protocol_version.as_str()), ("echo", "1.0"));
    assert_eq!(info.features, vec!["agents".to_owned()]);
}

#[test]
fn deep_values_cross_both_ways() {
    big_stack(|| {
        let depth = 100_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let mut de = serde_json::Deserializer::from_str(&text);
        de.disable_recursion_limit();
        let deep: Value = serde::Deserialize::deserialize(serde_stacker::Deserializer::new(&mut de)).unwrap();
        let mut subject = echo("deep_values_cross_both_ways");
        let reply = subject.request("echo", json!({ "deep": deep }), Duration::from_secs(60)).unwrap();
        let mut at = &reply.result.unwrap()["deep"];
        let mut levels = 0;
        while let Some(inner) = at.as_array().and_then(|a| a.first()) {
            at = inner;
            levels += 1;
        }
        assert_eq!(levels, depth - 1);
        let transcript = subject.take_transcript();
        assert!(transcript.iter().all(|l| l.chars().count() < 1000), "long lines are cut for display");
    });
}

#[test]
fn events_rpc_errors_and_wrong_ids() {
    let mut subject = echo("events_rpc_errors_and_wrong_ids");
    let reply = subject.request("emit", json!({}), Duration::from_secs(5)).unwrap();
    assert_eq!(reply.events.len(), 2);
    assert_eq!(reply.events[1]["seq"], 2);
    let reply = subject.request("echo", json!({"a": 1}), Duration::from_secs(5)).unwrap();
    assert!(reply.events.is_empty());
    assert_eq!(reply.result.unwrap(), json!({"a": 1}));
    let reply = subject.request("fail", json!({}), Duration::from_secs(5)).unwrap();
    assert_eq!(reply.result.unwrap_err().code, -32601);
    match subject.request("wrongid", json!({}), Duration::from_secs(5)) {
        Err(SubjectError::Protocol { message }) => assert!(message.contains("id"), "{message}"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
    subject.restart().unwrap();
    subject.initialize().unwrap();
    let reply = subject.request("echo", json!({"b": [1]}), Duration::from_secs(5)).unwrap();
    assert_eq!(reply.result.unwrap(), json!({"b": [1]}));
    let transcript = subject.take_transcript();
    assert!(transcript.iter().any(|l| l.starts_with("→ ")) && transcript.iter().any(|l| l.starts_with("← ")));
}
