//! The Code Mode dispatch-log events (`code-dispatch-start`, `code-dispatch`) against the protocol's event
//! schema: both shapes validate, a missing or unknown field is rejected, and the older event kinds keep
//! their own shapes after the schema's branch for them was nested (conformance/PROTOCOL.md § Notifications).

use dsh_conformance::messages::MessageValidator;
use serde_json::{Value, json};

fn params(event: Value) -> Value {
    json!({ "session": "s", "seq": 1, "event": event })
}

fn start() -> Value {
    json!({
        "type": "code-dispatch-start", "agent": "a", "rootCallId": "c1", "parentCallId": "c1",
        "subCallId": "c1:code:1", "name": "echo", "arguments": { "text": "hi" }
    })
}

fn settled() -> Value {
    let mut event = start();
    event["type"] = json!("code-dispatch");
    event["isError"] = json!(false);
    event["content"] = json!([{ "type": "text", "text": "hi" }, { "type": "image", "data": "AA==", "mimeType": "image/png" }]);
    event
}

fn check(event: Value) -> Result<(), String> {
    MessageValidator::new().expect("schemas").event_params(&params(event))
}

#[test]
fn both_dispatch_events_validate() {
    check(start()).expect("code-dispatch-start");
    check(settled()).expect("code-dispatch");
}

#[test]
fn dispatch_events_reject_missing_and_unknown_fields() {
    for field in ["agent", "rootCallId", "parentCallId", "subCallId", "name", "arguments"] {
        let mut event = start();
        event.as_object_mut().expect("an object").remove(field);
        assert!(check(event).is_err(), "code-dispatch-start without {field}");
    }
    for field in ["isError", "content"] {
        let mut event = settled();
        event.as_object_mut().expect("an object").remove(field);
        assert!(check(event).is_err(), "code-dispatch without {field}");
    }
    let mut event = start();
    event["isError"] = json!(false);
    assert!(check(event).is_err(), "code-dispatch-start carries no outcome");
    // The settle entry's content is whatever the `tools/code-dispatch-log` waterfall returned, logged
    // unvalidated as rc.8 logs it (RUN-049): any JSON value, not only content parts.
    for content in [json!([{ "type": "text" }]), json!(42), json!({ "spill": "locator" })] {
        let mut event = settled();
        event["content"] = content.clone();
        check(event).unwrap_or_else(|e| panic!("content {content}: {e}"));
    }
}

#[test]
fn mark_and_result_events_keep_their_shapes() {
    check(json!({ "type": "mark", "label": "x", "callId": "c1", "aborted": true })).expect("mark");
    check(json!({ "type": "result", "callId": "c1", "result": { "isError": false, "value": 1, "content": [] } })).expect("result");
    assert!(check(json!({ "type": "mark", "label": "x", "subCallId": "c1:code:1" })).is_err());
    assert!(check(json!({ "type": "result", "callId": "c1", "result": { "isError": false, "content": [] }, "agent": "a" })).is_err());
    assert!(check(json!({ "type": "code-dispatched" })).is_err());
}
