//! A `dsh_tools::ToolExecutionResult` in the protocol's Result shape (`spec/README.md` § Results):
//! `{isError, value?, content, error?: {message, code?, name?}, meta?, additionalContexts?, concludesTurn?}`.

use dsh_tools::ToolExecutionResult;
use serde_json::{Map, Value, json};

use super::deep;

/// The protocol JSON of a result (deep values copied without recursion).
pub fn to_json(result: &ToolExecutionResult) -> Value {
    let mut out = Map::new();
    let (content, meta, contexts) = match result {
        ToolExecutionResult::Success { value, content, meta, additional_contexts, .. } => {
            out.insert("isError".into(), false.into());
            out.insert("value".into(), deep::clone(value));
            (content, meta, additional_contexts)
        }
        ToolExecutionResult::Failure { error, content, meta, additional_contexts } => {
            let _ = error;
            out.insert("isError".into(), true.into());
            (content, meta, additional_contexts)
        }
    };
    out.insert("content".into(), Value::Array(content.iter().map(deep::clone).collect()));
    if let ToolExecutionResult::Failure { error, .. } = result {
        let mut e = Map::new();
        e.insert("message".into(), error.message.clone().into());
        if let Some(info) = &error.info {
            e.insert("code".into(), info.code.as_str().into());
            e.insert("name".into(), info.name.clone().into());
        }
        out.insert("error".into(), Value::Object(e));
    }
    if let Some(meta) = meta {
        out.insert("meta".into(), deep::clone(meta));
    }
    if !contexts.is_empty() {
        out.insert("additionalContexts".into(), Value::Array(contexts.iter().map(context).collect()));
    }
    if result.concludes_turn() {
        out.insert("concludesTurn".into(), true.into());
    }
    Value::Object(out)
}

/// A context as `{ text, source? }`: the reference carries what fixtures deferred in that shape already;
/// anything else is passed through.
fn context(c: &Value) -> Value {
    if let Some(converted) = super::code::user_message_context(c) {
        return converted;
    }
    match (c.get("text").and_then(Value::as_str), c.get("source")) {
        (Some(text), None) => json!({ "text": text }),
        (Some(text), Some(source)) => json!({ "text": text, "source": source }),
        _ => deep::clone(c),
    }
}
