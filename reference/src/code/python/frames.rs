//! The fd-3 wire of the Python runtime: JSON lines mirroring the frame vocabulary of upstream's
//! `@deepseek-ai/dsh-code-runtime-python` `py/protocol.py` — host → child `boot`, `run`, `reply`; child →
//! host `boot-ack`, `call`, `log`, `done`.
//!
//! Every child frame is hostile (the program owns fd 3): [`parse_child_frame`] parses the raw line with the
//! iterative, raw-token reader of `json.rs` and rebuilds the frame field by field as upstream's
//! `validateChildFrame` does: extra fields never ride along, and a frame that validator rejects is
//! [`Parsed::Dropped`] — the run ignores it, as if it was never sent. Rejected are: non-objects, unknown
//! types, a `log` whose `text` is not a string, a `call` whose `id` is not a finite number other than -0
//! (so `1.5`, `-3` and `1e300` are kept, and a reply echoes them), whose `global` / `name` is not a string,
//! that has no `args` or whose `args` are not lossless JSON, and a `done` whose `error` is not an object
//! with a string `message` and a `kind` of `exception`, `invalid-output` or `output-limit`. Where the
//! reference reads a token more strictly than JavaScript's `JSON.parse` — an integer a double cannot hold
//! exactly (upstream's `hasUnsafeIntegerToken` flags that frame as forged), a lone surrogate — in a call's
//! `id` or `args`, the frame is dropped too (the bootstrap checks a binding's arguments before sending, so
//! only a forged frame carries them). A line that is not UTF-8 or not JSON at all is an [`Err`]: rc.8
//! publishes its validator but not the host that parses lines, and the reference ends such a run as
//! `worker-exit`. A `done` whose `value` is not lossless JSON is kept and marked, so the run fails it
//! as the TypeScript host does ("program completion must be lossless JSON").
//!
//! Spec: RUN-007, RUN-023 (lossless JSON crossing both ways); hostile fd-3 frames (upstream
//! `validateChildFrame`, `hasUnsafeIntegerToken`, `hasNonLosslessNumber`).

use serde_json::{Map, Value};

use super::json::{self, encode_value, json_string};
use crate::code::BindingNames;

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
        /// A finite JavaScript number other than -0 (not necessarily an integer).
        id: f64,
        global: String,
        name: String,
        args: Value,
    },
    Done {
        value: DoneValue,
        error: Option<(DoneKind, String)>,
    },
}

/// What one fd-3 line holds once validated.
#[derive(Debug)]
pub(super) enum Parsed {
    /// A rebuilt frame.
    Frame(ChildFrame),
    /// A frame upstream's `validateChildFrame` drops silently.
    Dropped,
}

/// Parse and validate one line (without its `\n`) received on fd 3; `Err` when it is not a JSON document.
pub(super) fn parse_child_frame(line: &[u8]) -> Result<Parsed, String> {
    let text = std::str::from_utf8(line).map_err(|e| format!("frame is not UTF-8 (byte {})", e.valid_up_to()))?;
    let parsed = json::parse(text)?;
    let Value::Object(mut fields) = parsed.value else {
        crate::value::dismantle(parsed.value);
        return Ok(Parsed::Dropped);
    };
    let lossy = parsed.lossy_members;
    let result = rebuild(&mut fields, &lossy);
    crate::value::dismantle(Value::Object(fields));
    // The reason a frame is rejected is not reported: upstream drops it without a trace.
    Ok(result.map_or(Parsed::Dropped, Parsed::Frame))
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
                return Err("call frame `id` is -0, not finite, or not exact as a double".to_owned());
            }
            let id = match fields.get("id") {
                Some(Value::Number(n)) => n.as_f64().filter(|f| f.is_finite()).ok_or("call frame `id` is not finite")?,
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
            if is_lossy("args") {
                return Err("call frame `args` are not lossless JSON".to_owned());
            }
            let Some(args) = fields.shift_remove("args") else {
                return Err("call frame has no `args`".to_owned());
            };
            Ok(ChildFrame::Call { id, global, name, args })
        }
        "done" => {
            let error = match fields.get("error") {
                None => None,
                Some(Value::Object(err)) => {
                    let Some(Value::String(message)) = err.get("message") else {
                        return Err("done frame `error.message` is not a string".to_owned());
                    };
                    let kind = match err.get("kind") {
                        Some(Value::String(k)) if k == "exception" => DoneKind::Exception,
                        Some(Value::String(k)) if k == "invalid-output" => DoneKind::InvalidOutput,
                        Some(Value::String(k)) if k == "output-limit" => DoneKind::OutputLimit,
                        _ => return Err("done frame `error.kind` is not exception, invalid-output or output-limit".to_owned()),
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
    pub names: BootNames<'a>,
    pub error_class: Option<(&'a str, &'a str)>,
}

/// How a boot frame gives a namespace's names.
pub(super) enum BootNames<'a> {
    /// Listed: `"names"`, a JSON array ([`names_array`]).
    Inline(&'a str),
    /// The fork server's names table the child inherited (`zygote.rs`): `"namesTable"` (its id) and
    /// `"namesCount"` (its distinct names, which the child checks).
    Table { id: u64, count: usize },
}

/// The boot frame's `names` of `names`: the distinct names in first-declaration order, as a JSON array
/// (rendered once per [`BindingNames`], which a host shares across runs).
pub(super) fn names_array(names: &BindingNames) -> &str {
    names.rendered(|names| {
        let mut out = String::with_capacity(2 + names.len() * 16);
        out.push('[');
        for (j, name) in names.distinct().enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push_str(&json_string(name));
        }
        out.push(']');
        out
    })
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
        match ns.names {
            BootNames::Inline(names) => {
                out.push_str(",\"names\":");
                out.push_str(names);
            }
            BootNames::Table { id, count } => {
                out.push_str(&format!(",\"namesTable\":{id},\"namesCount\":{count}"));
            }
        }
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
pub(super) fn reply_err_frame(id: f64, message: &str) -> Vec<u8> {
    let id = crate::value::js_number_string(id);
    format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":false,\"message\":{}}}\n", json_string(message)).into_bytes()
}

/// A successful `reply` frame (upstream `ReplyOk`), or `None` when `value` is not lossless JSON as a
/// JavaScript number model sees it (negative zero, an integer a double cannot hold exactly).
pub(super) fn reply_ok_frame(id: f64, value: &Value) -> Option<Vec<u8>> {
    let id = crate::value::js_number_string(id);
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
        match parse_child_frame(line.as_bytes())? {
            Parsed::Frame(frame) => Ok(frame),
            Parsed::Dropped => Err("dropped".to_owned()),
        }
    }

    fn dropped(line: &str) -> bool {
        matches!(parse_child_frame(line.as_bytes()), Ok(Parsed::Dropped))
    }

    #[test]
    fn frames_are_rebuilt_and_marked() {
        match frame(r#"{"type":"call","id":3,"global":"tools","name":"x","args":{"a":1},"extra":1}"#) {
            Ok(ChildFrame::Call { id, args, .. }) => assert_eq!((id, args), (3.0, serde_json::json!({"a": 1}))),
            other => panic!("{other:?}"),
        }
        match frame(r#"{"type":"done","value":[1,2.5,"\ud83d\ude00"]}"#) {
            Ok(ChildFrame::Done { value: DoneValue::Value(v), error: None }) => {
                assert_eq!(v, serde_json::json!([1, 2.5, "😀"]));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(frame(r#"{"type":"done","value":"\udc00"}"#), Ok(ChildFrame::Done { value: DoneValue::Lossy, .. })));
        match frame(r#"{"type":"done","error":{"kind":"exception","message":"m","extra":1},"value":2}"#) {
            Ok(ChildFrame::Done { value: DoneValue::Value(v), error: Some((DoneKind::Exception, m)) }) => {
                assert_eq!((v, m.as_str()), (serde_json::json!(2), "m"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(frame(r#"{"type":"log","text":"hi","truncated":"yes","extra":1}"#), Ok(ChildFrame::Log { truncated: false, .. })));
        assert!(matches!(frame(r#"{"type":"boot-ack","x":1}"#), Ok(ChildFrame::BootAck)));
        assert!(parse_child_frame(b"garbage").is_err());
        assert!(parse_child_frame(br#"{"type":"log","text":"a"} x"#).is_err());
        assert!(parse_child_frame(br#"{"type":"log","text":"a","#).is_err());
    }

    /// rc.8's `validateChildFrame` (probed, spec/audit/code-mode.md L21): ids that are finite numbers other
    /// than -0 are kept, whatever their sign or integrality; everything else listed is dropped silently.
    #[test]
    fn frames_upstream_drops_are_dropped_and_what_it_keeps_is_kept() {
        for id in ["1.5", "-3", "1e300"] {
            let line = format!(r#"{{"type":"call","id":{id},"global":"x","name":"n","args":{{}}}}"#);
            assert!(matches!(frame(&line), Ok(ChildFrame::Call { .. })), "{line}");
        }
        for line in [
            "null",
            "5",
            r#"{"type":"log","text":1}"#,
            r#"{"type":"call","id":-0,"global":"t","name":"x","args":1}"#,
            r#"{"type":"call","id":1e400,"global":"t","name":"x","args":1}"#,
            r#"{"type":"call","id":"1","global":"t","name":"x","args":1}"#,
            r#"{"type":"call","id":1,"global":"t","name":"x"}"#,
            r#"{"type":"call","id":1,"global":1,"name":"x","args":1}"#,
            r#"{"type":"call","id":1,"global":"t","name":"x","args":{"z":-0}}"#,
            r#"{"type":"call","id":1,"global":"t","name":"x","args":[1e400]}"#,
            r#"{"type":"done","error":{"kind":"timeout","message":"m"}}"#,
            r#"{"type":"done","error":{"kind":"exception","message":1}}"#,
            r#"{"type":"done","error":null}"#,
            r#"{"type":"reply"}"#,
            r#"{"type":"nope"}"#,
        ] {
            assert!(dropped(line), "{line}");
        }
    }

    #[test]
    fn reply_ids_echo_the_call_id_as_javascript_prints_it() {
        assert_eq!(reply_err_frame(1.5, "m"), br#"{"type":"reply","id":1.5,"ok":false,"message":"m"}
"#.to_vec());
        assert_eq!(reply_ok_frame(1e300, &serde_json::json!(1)), Some(br#"{"type":"reply","id":1e+300,"ok":true,"value":1}
"#.to_vec()));
    }

    #[test]
    fn deep_values_are_read_without_recursion() {
        let deep = format!("{{\"type\":\"done\",\"value\":{}{}}}", "[".repeat(200_000), "]".repeat(200_000));
        match frame(&deep) {
            Ok(ChildFrame::Done { value: DoneValue::Value(v), .. }) => crate::value::dismantle(v),
            other => panic!("{other:?}"),
        }
    }
}
