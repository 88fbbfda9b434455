//! Framing of the adapter protocol on the harness side: request lines, depth-unlimited parsing, telling
//! responses from event notifications, and display truncation for transcripts.

use dsh_conformance::subject::{RpcError, SubjectInfo};
use serde::Deserialize;
use serde_json::Value;

/// Longest line shown in a transcript or message; the rest is elided with its length.
const DISPLAY_MAX: usize = 600;
/// The protocol version the harness speaks.
pub const PROTOCOL_VERSION: &str = "1.0";

/// What one message from the adapter turned out to be.
pub enum Message {
    /// `params` of an `event` notification.
    Event(Value),
    /// The response to the request in flight.
    Response(Result<Value, RpcError>),
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
    serde_json::json!({
        "protocolVersion": PROTOCOL_VERSION,
        "suite": { "name": "dsh-conformance", "version": env!("CARGO_PKG_VERSION") },
    })
}

/// Parses one line as JSON with no depth limit.
pub fn parse(line: &str) -> Result<Value, String> {
    let mut de = serde_json::Deserializer::from_str(line);
    de.disable_recursion_limit();
    let value = Value::deserialize(serde_stacker::Deserializer::new(&mut de)).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// Checks the JSON-RPC envelope of a received message.
pub fn validate_incoming(value: &Value) -> Result<(), String> {
    let Some(object) = value.as_object() else { return Err("not a JSON object".into()) };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(r#"`jsonrpc` is not "2.0""#.into());
    }
    Ok(())
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
        Some(other) => Message::Invalid(format!("unexpected notification `{other}`")),
        None => Message::Invalid("neither a response nor a notification".into()),
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

/// Reads `SubjectInfo` out of an `initialize` result.
pub fn subject_info(result: &Value) -> Result<SubjectInfo, String> {
    let text = |path: &[&str]| -> Result<String, String> {
        let mut at = result;
        for key in path {
            at = at.get(key).ok_or_else(|| format!("initialize result lacks `{}`", path.join(".")))?;
        }
        at.as_str().map(str::to_owned).ok_or_else(|| format!("`{}` is not a string", path.join(".")))
    };
    let list = |key: &str| -> Vec<String> {
        result
            .get("capabilities")
            .and_then(|c| c.get(key))
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default()
    };
    Ok(SubjectInfo {
        protocol_version: text(&["protocolVersion"])?,
        name: text(&["implementation", "name"])?,
        version: text(&["implementation", "version"])?,
        language: text(&["implementation", "language"])?,
        profiles: list("profiles"),
        features: list("features"),
        runtimes: list("runtimes"),
    })
}

/// A line shortened for display, at a character boundary, saying how much was left out.
pub fn display(line: &str) -> String {
    if line.len() <= DISPLAY_MAX {
        return line.to_owned();
    }
    let mut cut = DISPLAY_MAX;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} more bytes)", &line[..cut], line.len() - cut)
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
    fn display_cuts_at_char_boundary() {
        let long = "é".repeat(DISPLAY_MAX);
        assert!(display(&long).contains("more bytes"));
    }
}
