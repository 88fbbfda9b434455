//! Framing of the adapter protocol on the harness side: request lines, depth-unlimited parsing, telling
//! responses from event notifications, and display truncation for transcripts.

use dsh_conformance::messages::{MessageValidator, PROTOCOL_SCHEMAS};
use dsh_conformance::subject::{RpcError, SubjectInfo};
use dsh_conformance::{json, protocol};
use serde_json::Value;

/// Longest line shown in a transcript or message; the rest is elided with its length.
const DISPLAY_MAX: usize = 600;
/// The protocol version the harness speaks.
pub use dsh_conformance::protocol::PROTOCOL_VERSION;

/// What one message from the adapter turned out to be.
pub enum Message {
    /// `params` of an `event` notification.
    Event(Value),
    /// The response to the request in flight.
    Response(Result<Value, RpcError>),
    /// A `failure` notification: the adapter says its own code failed inside the running session (what
    /// it reported, shown to people); the request in flight becomes `ERROR(adapter)` at once.
    Failure(String),
    /// Anything else, with what is wrong.
    Invalid(String),
}

/// One request as a protocol line (without the newline). Serialises `params` in place, never cloning it.
pub fn request_line(id: u64, method: &str, params: &Value) -> String {
    let method = serde_json::to_string(method).unwrap_or_else(|_| "\"?\"".into());
    let params = serde_json::to_string(params).unwrap_or_else(|_| "null".into());
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":{params}}}"#)
}

/// `initialize` params.
pub fn initialize_params() -> Value {
    protocol::initialize_params()
}

/// Parses one line as JSON with no depth limit (`dsh_conformance::json::parse_line`).
pub fn parse(line: &str) -> Result<Value, String> {
    json::parse_line(line)
}

/// Validates a received message against the protocol schemas: its envelope (`response`,
/// `error-response` or `event`) and, for a successful response, the result schema of `method`.
pub fn validate_incoming(value: &Value, method: &str) -> Result<(), String> {
    let validator = MessageValidator::shared()?;
    let Some(object) = value.as_object() else { return Err("not a JSON object".into()) };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(r#"`jsonrpc` is not "2.0""#.into());
    }
    if object.contains_key("id") {
        if object.contains_key("error") {
            return validator.message("error-response", value);
        }
        validator.message("response", value)?;
        let name = format!("{}.result", method.replace('/', "-"));
        return match object.get("result") {
            Some(result) if PROTOCOL_SCHEMAS.iter().any(|(n, _)| *n == name) => validator.result(method, result),
            _ => Ok(()),
        };
    }
    if object.get("method").and_then(Value::as_str) == Some("event") {
        return validator.message("event", value);
    }
    Ok(())
}

/// The `id` of a response: `None` for a message without one, `Some(None)` when it is not an integer.
pub fn response_id(value: &Value) -> Option<Option<u64>> {
    value.get("id").map(Value::as_u64)
}

/// The method of the notification an adapter sends to report a failure inside a running call
/// (`conformance/PROTOCOL.md` § Notifications).
pub const FAILURE: &str = "failure";

/// The `session` of an `event` or `failure` notification.
pub fn event_session(value: &Value) -> Option<String> {
    let method = value.get("method").and_then(Value::as_str);
    if !matches!(method, Some("event" | FAILURE)) || value.get("id").is_some() {
        return None;
    }
    value.pointer("/params/session").and_then(Value::as_str).map(str::to_owned)
}

/// Classifies a received message against the id of the request in flight.
pub fn classify(mut value: Value, expected_id: u64) -> Message {
    let Some(object) = value.as_object_mut() else { return Message::Invalid("not a JSON object".into()) };
    if let Some(id) = object.get("id") {
        if id.as_u64() != Some(expected_id) {
            return Message::Invalid(format!("response to id {id}, but the request in flight is {expected_id}"));
        }
        return match (object.remove("result"), object.remove("error")) {
            (Some(result), None) => Message::Response(Ok(result)),
            (None, Some(error)) => Message::Response(Err(rpc_error(&error))),
            _ => Message::Invalid("a response must carry exactly one of `result` and `error`".into()),
        };
    }
    match object.get("method").and_then(Value::as_str) {
        Some("event") => match object.remove("params") {
            Some(params) if params.is_object() => Message::Event(params),
            _ => Message::Invalid("an `event` notification without object `params`".into()),
        },
        Some(FAILURE) => failure(object.get("params")),
        Some(other) => Message::Invalid(format!("unexpected notification `{other}`")),
        None => Message::Invalid("neither a response nor a notification".into()),
    }
}

/// A `failure` notification's params `{ session, message, callId? }`, as shown to people.
fn failure(params: Option<&Value>) -> Message {
    let text = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
    match (text("session"), text("message")) {
        (Some(session), Some(message)) => {
            let call = text("callId").map(|c| format!(", call {c}")).unwrap_or_default();
            Message::Failure(format!("the adapter reported a failure inside session {session}{call}: {message}"))
        }
        _ => Message::Invalid("a `failure` notification needs params { session: string, message: string, callId?: string }".into()),
    }
}

/// Builds an `RpcError` from a JSON-RPC `error` object.
fn rpc_error(error: &Value) -> RpcError {
    RpcError {
        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: error.get("message").and_then(Value::as_str).unwrap_or("").to_owned(),
        data: error.get("data").cloned(),
    }
}

/// Reads `SubjectInfo` out of an (already validated) `initialize` result.
pub fn subject_info(result: &Value) -> Result<SubjectInfo, String> {
    protocol::subject_info(result).ok_or_else(|| "malformed initialize result".to_owned())
}

/// A line shortened for display, at a character boundary, saying how much was left out.
pub fn display(line: &str) -> String {
    shorten(line, DISPLAY_MAX)
}

/// `text` cut to at most `max` bytes at a character boundary, saying how many bytes were left out.
pub fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} more bytes)", &text[..cut], text.len() - cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_lines_parse() {
        let depth = 100_000;
        let line = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let handle = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || parse(&line).map(|v| v.is_array()))
            .expect("spawn");
        assert_eq!(handle.join().ok(), Some(Ok(true)));
    }

    #[test]
    fn a_failure_notification_names_session_and_call() {
        let line = serde_json::json!({"jsonrpc": "2.0", "method": "failure", "params": {"session": "s", "callId": "call-1", "message": "boom"}});
        assert_eq!(event_session(&line).as_deref(), Some("s"));
        match classify(line, 7) {
            Message::Failure(text) => assert_eq!(text, "the adapter reported a failure inside session s, call call-1: boom"),
            _ => panic!("not classified as a failure"),
        }
        let bad = serde_json::json!({"jsonrpc": "2.0", "method": "failure", "params": {"message": 3}});
        assert!(matches!(classify(bad, 7), Message::Invalid(m) if m.contains("needs params")));
    }

    #[test]
    fn display_cuts_at_char_boundary() {
        let long = "é".repeat(DISPLAY_MAX);
        assert!(display(&long).contains("more bytes"));
    }
}
