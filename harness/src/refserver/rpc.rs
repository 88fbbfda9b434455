//! JSON-RPC 2.0 envelopes: reading a request, building responses and the error codes the server uses.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::deep;

/// `-32700`: the line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// `-32600`: JSON, but not a request.
pub const INVALID_REQUEST: i64 = -32600;
/// `-32601`: unknown method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// `-32602`: params missing or of the wrong shape.
pub const INVALID_PARAMS: i64 = -32602;
/// `-32000`: the request names something that does not exist (session, handle, call, agent, fixture).
pub const UNKNOWN_NAME: i64 = -32000;
/// `-32002`: a fixture instruction, hook kind or request the reference does not implement.
pub const UNSUPPORTED: i64 = -32002;
/// `-32003`: the request is well-formed but the state forbids it (session already open, ...).
pub const INVALID_STATE: i64 = -32003;

/// `-32001`: setup asked for a registration the implementation rejected (PROTOCOL.md: "setup rejected").
pub const SETUP_REJECTED: i64 = -32001;

/// Why a request could not be carried out: becomes the `error` of the response.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// JSON-RPC error code.
    pub code: i64,
    /// Human-readable message.
    pub message: String,
}

impl Failure {
    /// A failure with this code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Failure { code, message: message.into() }
    }

    /// `INVALID_PARAMS`.
    pub fn params(message: impl Into<String>) -> Self {
        Failure::new(INVALID_PARAMS, message)
    }

    /// `UNKNOWN_NAME`.
    pub fn unknown(what: &str, name: &str) -> Self {
        Failure::new(UNKNOWN_NAME, format!("unknown {what} {name:?}"))
    }

    /// `UNSUPPORTED`: names what the reference lacks.
    pub fn unsupported(what: impl Into<String>) -> Self {
        Failure::new(UNSUPPORTED, format!("not implemented by the dsh-tools reference: {}", what.into()))
    }
}

/// A request taken apart (borrowing the request value).
#[derive(Debug)]
pub struct Request<'a> {
    /// The id, echoed in the response.
    pub id: Value,
    /// The method.
    pub method: &'a str,
    /// The params.
    pub params: Params<'a>,
}

/// Splits a request; on failure returns the id to answer with (null when unreadable) and the error.
pub fn split(request: &Value) -> Result<Request<'_>, (Value, Failure)> {
    let Value::Object(envelope) = request else {
        return Err((Value::Null, Failure::new(INVALID_REQUEST, "a request must be a JSON object")));
    };
    let id = match envelope.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => return Err((Value::Null, Failure::new(INVALID_REQUEST, "a request needs a string or number `id`"))),
    };
    if envelope.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((id, Failure::new(INVALID_REQUEST, "`jsonrpc` must be \"2.0\"")));
    }
    let Some(method) = envelope.get("method").and_then(Value::as_str) else {
        return Err((id, Failure::new(INVALID_REQUEST, "a request needs a string `method`")));
    };
    let params = match envelope.get("params") {
        None | Some(Value::Null) => Params(None),
        Some(Value::Object(p)) => Params(Some(p)),
        Some(_) => return Err((id, Failure::params("`params` must be an object"))),
    };
    Ok(Request { id, method, params })
}

/// The params of a request, with typed accessors whose errors are `INVALID_PARAMS` naming the field.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a>(Option<&'a Map<String, Value>>);

impl<'a> Params<'a> {
    /// A field, absent when missing or null.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.and_then(|m| m.get(key)).filter(|v| !v.is_null())
    }

    /// A field as sent, `null` included (where `null` is a value of its own, as an abort reason is).
    pub fn present(&self, key: &str) -> Option<&'a Value> {
        self.0.and_then(|m| m.get(key))
    }

    /// A required field.
    pub fn req(&self, key: &str) -> Result<&'a Value, Failure> {
        self.get(key).ok_or_else(|| Failure::params(format!("missing `{key}`")))
    }

    /// A required field that may be `null` (any JSON value is meaningful, as the `schema/*` payloads).
    pub fn json(&self, key: &str) -> Result<&'a Value, Failure> {
        self.0.and_then(|m| m.get(key)).ok_or_else(|| Failure::params(format!("missing `{key}`")))
    }

    /// A required string field.
    pub fn str(&self, key: &str) -> Result<&'a str, Failure> {
        self.req(key)?.as_str().ok_or_else(|| Failure::params(format!("`{key}` must be a string")))
    }

    /// An optional string field.
    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>, Failure> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or_else(|| Failure::params(format!("`{key}` must be a string"))),
        }
    }

    /// An optional boolean field (absent = false).
    pub fn flag(&self, key: &str) -> Result<bool, Failure> {
        match self.get(key) {
            None => Ok(false),
            Some(v) => v.as_bool().ok_or_else(|| Failure::params(format!("`{key}` must be a boolean"))),
        }
    }

    /// A required field deserialized into `T`.
    pub fn parse<T: DeserializeOwned>(&self, key: &str) -> Result<T, Failure> {
        parse_value(self.req(key)?, key)
    }

    /// An optional field deserialized into `T`.
    pub fn opt_parse<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, Failure> {
        self.get(key).map(|v| parse_value(v, key)).transpose()
    }
}

/// Deserializes `value` (any depth: call on a big-stack thread) into `T`; errors name `what`.
pub fn parse_value<T: DeserializeOwned>(value: &Value, what: &str) -> Result<T, Failure> {
    T::deserialize(value).map_err(|e| Failure::params(format!("`{what}`: {e}")))
}

/// A success response.
pub fn success(id: Value, result: Value) -> Value {
    deep::object([("jsonrpc", "2.0".into()), ("id", id), ("result", result)])
}

/// An error response.
pub fn error(id: Value, failure: Failure) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": failure.code, "message": failure.message } })
}

/// An event notification.
pub fn event(session: &str, seq: u64, event: Value) -> Value {
    let params = deep::object([("session", session.into()), ("seq", seq.into()), ("event", event)]);
    deep::object([("jsonrpc", "2.0".into()), ("method", "event".into()), ("params", params)])
}
