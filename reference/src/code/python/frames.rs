//! The fd-3 wire of the Python runtime: JSON lines mirroring the frame vocabulary of upstream's
//! `@deepseek-ai/dsh-code-runtime-python` `py/protocol.py` — host → child `boot`, `run`, `reply`; child →
//! host `boot-ack`, `call`, `log`, `done`.
//!
//! Every child frame is hostile (the program owns fd 3): [`parse_child_frame`] parses the raw line with the
//! iterative, raw-token reader of `json.rs` and rebuilds the frame field by field like upstream's
//! `validateChildFrame`: extra fields never ride along, a malformed frame is an error the run reports as
//! `worker-exit`. A
//! well-formed frame whose `args` / `value` is not lossless JSON (negative zero, a non-finite number, an
//! integer a JavaScript number cannot hold exactly, a lone surrogate) is kept and marked, so the run answers
//! it the way the TypeScript host does ("binding arguments must be lossless JSON", "program completion must
//! be lossless JSON").
//!
//! Spec: RUN-007, RUN-023 (lossless JSON crossing both ways); hostile fd-3 frames (upstream
//! `validateChildFrame`, `hasUnsafeIntegerToken`, `hasNonLosslessNumber`).

use serde_json::{Map, Value};

use super::json::{self, EXACT_LIMIT, encode_value, json_string};

/// The largest inbound frame the host buffers: four times the output ledger (a Python spelling of a value
/// is at most ~3x its JavaScript spelling: `1.0` vs `1`), at least 64 MiB, plus 1 MiB for the envelope.
/// The bootstrap computes the same bound from the boot frame's `maxValueBytes`.
pub(super) fn max_frame_bytes(max_output_bytes: u64) -> usize {
    let body = max_output_bytes.saturating_mul(4).max(64 << 20);
    usize::try_from(body.saturating_add(1 << 20)).unwrap_or(usize::MAX)
}

// ---------------------------------------------------------------------------------------------------------
// child → host

/// The failure kinds a `done` frame may carry (upstream `DoneErrorField.kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DoneKind {
    Exception,
    InvalidOutput,
    OutputLimit,
}

/// A `done` frame's completion value.
#[derive(Debug)]
pub(super) enum DoneValue {
    /// No `value` member: the program returned `None`.
    Absent,
    /// A `value` member that is not lossless JSON.
    Lossy,
    /// A lossless value.
    Value(Value),
}

/// One validated, rebuilt child frame.
#[derive(Debug)]
pub(super) enum ChildFrame {
    BootAck,
    Log {
        text: String,
        /// The frame is the child ledger's truncation marker, not program output.
        truncated: bool,
    },
    Call {
        id: u64,
        global: String,
        name: String,
        /// `None` when the arguments are not lossless JSON.
        args: Option<Value>,
    },
    Done {
        value: DoneValue,
        error: Option<(DoneKind, String)>,
    },
}

/// Parse and validate one line (without its `\n`) received on fd 3.
pub(super) fn parse_child_frame(line: &[u8]) -> Result<ChildFrame, String> {
    let text = std::str::from_utf8(line).map_err(|e| format!("frame is not UTF-8 (byte {})", e.valid_up_to()))?;
    let parsed = json::parse(text)?;
    let Value::Object(mut fields) = parsed.value else {
        crate::value::dismantle(parsed.value);
        return Err("frame is not a JSON object".to_owned());
    };
    let lossy = parsed.lossy_members;
    let result = rebuild(&mut fields, &lossy);
    crate::value::dismantle(Value::Object(fields));
    result
}

fn rebuild(fields: &mut Map<String, Value>, lossy: &[String]) -> Result<ChildFrame, String> {
    let is_lossy = |key: &str| lossy.iter().any(|k| k == key);
    let kind = match fields.get("type") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err("frame `type` is not a string".to_owned()),
        None => return Err("frame has no `type`".to_owned()),
    };
    match kind.as_str() {
        "boot-ack" => Ok(ChildFrame::BootAck),
        "log" => {
            let Some(Value::String(text)) = fields.get_mut("text") else {
                return Err("log frame `text` is not a string".to_owned());
            };
            let text = std::mem::take(text);
            let truncated = matches!(fields.get("truncated"), Some(Value::Bool(true)));
            Ok(ChildFrame::Log { text, truncated })
        }
        "call" => {
            if is_lossy("id") {
                return Err("call frame `id` is not a lossless number".to_owned());
            }
            let id = match fields.get("id") {
                Some(Value::Number(n)) => n
                    .as_u64()
                    .filter(|&id| id <= EXACT_LIMIT as u64)
                    .ok_or_else(|| format!("call frame `id` {n} is not a non-negative safe integer"))?,
                _ => return Err("call frame `id` is not a number".to_owned()),
            };
            let global = match fields.get_mut("global") {
                Some(Value::String(s)) => std::mem::take(s),
                _ => return Err("call frame `global` is not a string".to_owned()),
            };
            let name = match fields.get_mut("name") {
                Some(Value::String(s)) => std::mem::take(s),
                _ => return Err("call frame `name` is not a string".to_owned()),
            };
            let Some(args) = fields.shift_remove("args") else {
                return Err("call frame has no `args`".to_owned());
            };
            let args = if is_lossy("args") {
                crate::value::dismantle(args);
                None
            } else {
                Some(args)
            };
            Ok(ChildFrame::Call { id, global, name, args })
        }
        "done" => {
            let error = match fields.get("error") {
                None => None,
                Some(Value::Object(err)) => {
                    let kind = match err.get("kind") {
                        Some(Value::String(k)) if k == "exception" => DoneKind::Exception,
                        Some(Value::String(k)) if k == "invalid-output" => DoneKind::InvalidOutput,
                        Some(Value::String(k)) if k == "output-limit" => DoneKind::OutputLimit,
                        _ => return Err("done frame `error.kind` is not exception, invalid-output or output-limit".to_owned()),
                    };
                    let Some(Value::String(message)) = err.get("message") else {
                        return Err("done frame `error.message` is not a string".to_owned());
                    };
                    Some((kind, message.clone()))
                }
                Some(_) => return Err("done frame `error` is not an object".to_owned()),
            };
            let value = match fields.shift_remove("value") {
                None => DoneValue::Absent,
                Some(v) if is_lossy("value") => {
                    crate::value::dismantle(v);
                    DoneValue::Lossy
                }
                Some(v) => DoneValue::Value(v),
            };
            Ok(ChildFrame::Done { value, error })
        }
        other => Err(format!("unknown frame type {}", json_string(other))),
    }
}

// ---------------------------------------------------------------------------------------------------------
// host → child

/// A namespace declaration of the boot frame.
pub(super) struct BootNamespace<'a> {
    pub global: &'a str,
    pub names: Vec<&'a str>,
    pub error_class: Option<(&'a str, &'a str)>,
}

/// The `boot` frame (upstream `BootMessage`), newline-terminated.
pub(super) fn boot_frame(
    cpu_seconds: u64,
    address_space_bytes: u64,
    max_log_bytes: u64,
    max_value_bytes: u64,
    namespaces: &[BootNamespace<'_>],
    persistent: bool,
) -> Vec<u8> {
    let mut out = format!(
        "{{\"type\":\"boot\",{}\"cpuSeconds\":{cpu_seconds},\"addressSpaceBytes\":{address_space_bytes},\
         \"maxLogBytes\":{max_log_bytes},\"maxValueBytes\":{max_value_bytes},\"namespaces\":[",
        if persistent { "\"persistent\":true," } else { "" }
    );
    for (i, ns) in namespaces.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"global\":");
        out.push_str(&json_string(ns.global));
        out.push_str(",\"names\":[");
        for (j, name) in ns.names.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push_str(&json_string(name));
        }
        out.push(']');
        if let Some((name, member)) = ns.error_class {
            out.push_str(",\"errorClass\":{\"name\":");
            out.push_str(&json_string(name));
            out.push_str(",\"memberNameProperty\":");
            out.push_str(&json_string(member));
            out.push('}');
        }
        out.push('}');
    }
    out.push_str("]}\n");
    out.into_bytes()
}

/// The `run` frame (upstream `RunMessage`), newline-terminated.
pub(super) fn run_frame(program: &str) -> Vec<u8> {
    let mut out = String::with_capacity(program.len() + 32);
    out.push_str("{\"type\":\"run\",\"program\":");
    out.push_str(&json_string(program));
    out.push_str("}\n");
    out.into_bytes()
}

/// A failed `reply` frame (upstream `ReplyErr`), newline-terminated.
pub(super) fn reply_err_frame(id: u64, message: &str) -> Vec<u8> {
    format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":false,\"message\":{}}}\n", json_string(message)).into_bytes()
}

/// A successful `reply` frame (upstream `ReplyOk`), or `None` when `value` is not lossless JSON as a
/// JavaScript number model sees it (negative zero, an integer a double cannot hold exactly).
pub(super) fn reply_ok_frame(id: u64, value: &Value) -> Option<Vec<u8>> {
    let mut out = format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":true,\"value\":");
    encode_value(&mut out, value)?;
    out.push_str("}\n");
    Some(out.into_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn frame(line: &str) -> Result<ChildFrame, String> {
        parse_child_frame(line.as_bytes())
    }

    #[test]
    fn frames_are_rebuilt_and_marked() {
        match frame(r#"{"type":"call","id":3,"global":"tools","name":"x","args":{"a":-0.0},"extra":1}"#) {
            Ok(ChildFrame::Call { id: 3, args: None, .. }) => {}
            other => panic!("{other:?}"),
        }
        match frame(r#"{"type":"done","value":[1,2.5,"\ud83d\ude00"]}"#) {
            Ok(ChildFrame::Done { value: DoneValue::Value(v), error: None }) => {
                assert_eq!(v, serde_json::json!([1, 2.5, "😀"]));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(frame(r#"{"type":"done","value":"\udc00"}"#), Ok(ChildFrame::Done { value: DoneValue::Lossy, .. })));
        assert!(frame("garbage").is_err());
        assert!(frame(r#"{"type":"call","id":-1,"global":"t","name":"x","args":1}"#).is_err());
        assert!(frame(r#"{"type":"call","id":1.5,"global":"t","name":"x","args":1}"#).is_err());
        assert!(frame(r#"{"type":"call","id":1,"global":"t","name":"x"}"#).is_err());
        assert!(frame(r#"{"type":"nope"}"#).is_err());
        assert!(frame(r#"{"type":"done","error":null}"#).is_err());
        assert!(frame(r#"{"type":"log","text":"a"} x"#).is_err());
        assert!(frame(r#"{"type":"log","text":"a","#).is_err());
        let deep = format!("{{\"type\":\"done\",\"value\":{}{}}}", "[".repeat(200_000), "]".repeat(200_000));
        match frame(&deep) {
            Ok(ChildFrame::Done { value: DoneValue::Value(v), .. }) => crate::value::dismantle(v),
            other => panic!("{other:?}"),
        }
    }
}
