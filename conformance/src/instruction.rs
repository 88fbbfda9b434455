//! The instruction vocabulary tool fixtures and listeners share (`spec/README.md` § Instructions): one
//! [`Instruction`] per step of a fixture's behaviour, the thrown-error form [`ThrowSpec`], additional
//! contexts, and the serde helpers of the scenario types (the literal [`True`], keys whose `null` is
//! meaningful). The bottom of the scenario model: `fixture.rs`, `listener.rs` and `scenario.rs` build on it.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The literal `true`: the only value some single-key alternatives accept (`{ invalid: true }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct True;

impl Serialize for True {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(true)
    }
}

impl<'de> Deserialize<'de> for True {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if bool::deserialize(d)? { Ok(True) } else { Err(D::Error::custom("expected `true`")) }
    }
}

/// One instruction: a single-key mapping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Instruction {
    /// Emit `{type: mark, label, callId}`.
    Emit(String),
    /// Wait until the gate is opened, ignoring the signal.
    Wait(String),
    /// Wait until the gate is opened or the signal aborts.
    WaitOrAbort(String),
    /// Wait until the signal aborts.
    AwaitAbort(True),
    /// Emit `{type: mark, label, callId, aborted}`.
    EmitSignal(String),
    /// Emit `{type: mark, label, callId, aborted, reason?}`: `reason` is `String(signal.reason)` of the
    /// signal this code sees, present only once it is aborted (PIPE-022).
    EmitSignalReason(String),
    /// Emit `{type: mark, label, callId, rootCallId}`: the root call of the execution's tree.
    EmitRoot(String),
    /// Approval answerer only: emit `{type: mark, label, callId, agent, toolName, reason?}`, what it was asked.
    EmitRequest(String),
    /// Body only: `deferContext(context)`.
    DeferContext(ContextSpec),
    /// Body only: `concludeTurn()`: mark a successful final result as terminal for the turn.
    ConcludeTurn(True),
    /// Body only: return this value and stop.
    Return(Value),
    /// Body only: return the argument at a dotted path (`""` = all arguments).
    ReturnArgument(String),
    /// Throw and stop.
    Throw(ThrowSpec),
    /// Register a listener from inside running code, as the `addHook` step does (`{ <kind>: listener,
    /// as? }`, kept as written here and read by the server; PIPE-023).
    AddHook(Box<Value>),
    /// Dispose the registration held under a handle, as the `dispose` step does (PIPE-023).
    Dispose(String),
}

/// An additional context: `{ text, source? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSpec {
    /// The context text.
    pub text: String,
    /// Its source label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// `deserialize_with` for a key whose `null` is meaningful: present (even `null`) is `Some`.
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `deserialize_with` for a required key that may be `null`.
pub(crate) fn nullable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d)
}

/// What to throw: `"text"` (an `Error`), `{ message, name?, code? }` (an `Error`, or with `code` a
/// `HarnessError`), or `{ value: V }` (the JSON value itself, not an `Error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ThrowSpec {
    /// A plain `Error` with this message.
    Message(String),
    /// An error with a message, optionally a `name`, and with a `code` a `HarnessError`.
    Error(ErrorSpec),
    /// A thrown value that is not an `Error`.
    Value(ThrownValue),
}

/// `{ message, name?, code? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorSpec {
    /// The error's message.
    pub message: String,
    /// The error's `name` (default `Error`, or `HarnessError` with a `code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// With a code, the thrown error is a `HarnessError(message, code)`: its `{ name, code }` is the
    /// failure's routable info.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// `{ value: V }`: throw the JSON value `V` as is (a string, a number, `null`, an object, an array).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThrownValue {
    /// The value thrown.
    pub value: Value,
}

impl ThrowSpec {
    /// The error's message, or `None` for a thrown non-`Error` value (whose message the subject
    /// derives as upstream's `errorMessage` does: a string `message` property, else `String(value)`).
    pub fn message(&self) -> Option<&str> {
        match self {
            ThrowSpec::Message(m) => Some(m),
            ThrowSpec::Error(e) => Some(&e.message),
            ThrowSpec::Value(_) => None,
        }
    }

    /// The `name`, when given.
    pub fn name(&self) -> Option<&str> {
        match self {
            ThrowSpec::Error(e) => e.name.as_deref(),
            ThrowSpec::Message(_) | ThrowSpec::Value(_) => None,
        }
    }

    /// The `HarnessError` code, when given.
    pub fn code(&self) -> Option<&str> {
        match self {
            ThrowSpec::Error(e) => e.code.as_deref(),
            ThrowSpec::Message(_) | ThrowSpec::Value(_) => None,
        }
    }
}
