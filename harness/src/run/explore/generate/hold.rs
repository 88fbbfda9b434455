//! The explorer's hold (issue 40): the dedicated tool `held`, the listeners that hold it at a gate, and
//! the steps that start it, wait until it holds, abort it (or not), open the gate and await it.

use serde_json::{Value, json};

use super::{Hold, decision, kind_key};

/// The hold's instructions: `emit: hold`, then wait on gate `g`.
fn hold_instrs(hold: &Hold) -> Vec<Value> {
    let wait = if hold.or_abort { json!({ "waitOrAbort": "g" }) } else { json!({ "wait": "g" }) };
    vec![json!({ "emit": "hold" }), wait]
}

pub(super) fn held_tool(hold: &Hold) -> Value {
    let mut body = vec![json!({ "emit": "held-body" })];
    if hold.stage % 4 == 2 {
        body = hold_instrs(hold);
        body.push(json!({ "emitSignal": "held-signal" }));
    }
    body.push(json!({ "return": "held value" }));
    json!({ "name": "held", "parameters": {}, "output": { "schema": { "type": "string" }, "render": "text" }, "body": body })
}

/// The listeners on `held`: the holding one (unless the body holds) and an optional later one.
pub(super) fn hold_listeners(hold: &Hold) -> Vec<(String, Value)> {
    // Stage to listener kind (stages of `later`: 0 pre, 1 guard, 2 wrapper, 3 body, 4 post).
    let kind_of = |stage: u8| match stage {
        0 => Some(0u8),
        1 => Some(1),
        2 => Some(2),
        3 => None,
        _ => Some(3),
    };
    // The hold's stage on the scale of `later`'s.
    let held_at = [0u8, 2, 3, 4][usize::from(hold.stage % 4)];
    let mut out = Vec::new();
    if let Some(kind) = kind_of(held_at) {
        let mut map = serde_json::Map::new();
        map.insert("id".into(), json!("hold"));
        map.insert("tools".into(), json!(["held"]));
        map.insert("do".into(), Value::Array(hold_instrs(hold)));
        if let Some((field, value)) = decision(kind, hold.decision, "hold") {
            map.insert(field.into(), value);
        }
        out.push((kind_key(kind).to_owned(), Value::Object(map)));
    }
    if let Some((offset, pick)) = hold.later {
        let stage = (held_at + offset).min(4);
        if let Some(kind) = kind_of(stage).filter(|_| stage != held_at) {
            let mut map = serde_json::Map::new();
            map.insert("id".into(), json!("later"));
            map.insert("tools".into(), json!(["held"]));
            map.insert("do".into(), json!([{ "emitSignal": "later" }]));
            if let Some((field, value)) = decision(kind, pick, "later") {
                map.insert(field.into(), value);
            }
            out.push((kind_key(kind).to_owned(), Value::Object(map)));
        }
    }
    out
}

/// The hold's steps: start `held`, wait until it holds, abort it (or not), open the gate, await it.
pub(super) fn hold_steps(hold: &Hold) -> Vec<Value> {
    let mut steps = vec![json!({ "start": { "callId": "held-call", "name": "held", "arguments": {} } }), json!({ "waitFor": "hold" })];
    match hold.abort {
        None => {}
        Some(None) => steps.push(json!({ "abort": { "callId": "held-call" } })),
        Some(Some(r)) => {
            let reason = ["stop", "user cancelled"][usize::from(r % 2)];
            steps.push(json!({ "abort": { "callId": "held-call", "reason": reason } }));
        }
    }
    steps.push(json!({ "openGate": "g" }));
    steps.push(json!({ "await": "held-call" }));
    steps
}
