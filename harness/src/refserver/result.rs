//! A `dsh_tools::ToolExecutionResult` in the protocol's Result shape (`spec/README.md` § Results):
//! `{isError, value?, content, error?: {message, code?, name?}, meta?, additionalContexts?, concludesTurn?}`.

use dsh_tools::ToolExecutionResult;
use serde_json::{Map, Value, json};

use super::deep;

/// The protocol JSON of a result (deep values copied without recursion).
pub fn to_json(result: &ToolExecutionResult) -> Value {
    let concludes = result.concludes_turn();
    match result {
        ToolExecutionResult::Success { value, content, meta, additional_contexts, .. } => Parts {
            value: Some(deep::clone(value)),
            content: content.iter().map(deep::clone).collect(),
            error: None,
            meta: meta.as_ref().map(deep::clone),
            contexts: additional_contexts,
            concludes,
        }
        .assemble(),
        ToolExecutionResult::Failure { error, content, meta, additional_contexts } => Parts {
            value: None,
            content: content.iter().map(deep::clone).collect(),
            error: Some(error),
            meta: meta.as_ref().map(deep::clone),
            contexts: additional_contexts,
            concludes,
        }
        .assemble(),
    }
}

/// [`to_json`] of a result that is not needed afterwards: its value, content and meta are moved, not
/// copied (a `run_code` result may carry 64 MiB of logs twice, as value and as content).
pub fn into_json(result: ToolExecutionResult) -> Value {
    let concludes = result.concludes_turn();
    match result {
        ToolExecutionResult::Success { value, content, meta, additional_contexts, .. } => {
            Parts { value: Some(value), content, error: None, meta, contexts: &additional_contexts, concludes }.assemble()
        }
        ToolExecutionResult::Failure { error, content, meta, additional_contexts } => {
            Parts { value: None, content, error: Some(&error), meta, contexts: &additional_contexts, concludes }.assemble()
        }
    }
}

/// The fields of a result's protocol JSON, owned where they may be deep.
struct Parts<'r> {
    value: Option<Value>,
    content: Vec<Value>,
    error: Option<&'r dsh_tools::ToolError>,
    meta: Option<Value>,
    contexts: &'r [Value],
    concludes: bool,
}

impl Parts<'_> {
    /// `{isError, value?, content, error?, meta?, additionalContexts?, concludesTurn?}`, in that order.
    fn assemble(self) -> Value {
        let mut out = Map::new();
        out.insert("isError".into(), self.error.is_some().into());
        if let Some(value) = self.value {
            out.insert("value".into(), value);
        }
        out.insert("content".into(), Value::Array(self.content));
        if let Some(error) = self.error {
            let mut e = Map::new();
            e.insert("message".into(), error.message.clone().into());
            if let Some(info) = &error.info {
                e.insert("code".into(), info.code.as_str().into());
                e.insert("name".into(), info.name.clone().into());
            }
            out.insert("error".into(), Value::Object(e));
        }
        if let Some(meta) = self.meta {
            out.insert("meta".into(), meta);
        }
        if !self.contexts.is_empty() {
            out.insert("additionalContexts".into(), Value::Array(self.contexts.iter().map(context).collect()));
        }
        if self.concludes {
            out.insert("concludesTurn".into(), true.into());
        }
        Value::Object(out)
    }
}

/// A context as the message the model will be shown, `{ role, source, content }` (PROTOCOL.md § Session
/// requests): a fixture's `{ text, source? }` becomes the user message an adapter over upstream builds from
/// it (`createUserMessage`: one text part, source `{ kind: plugin, plugin }` or `{ kind: user }`); a deferred
/// message (the bridge's image-bearing sub-result) is reported whole, its parts as they are.
fn context(c: &Value) -> Value {
    if c.get("role").is_some() {
        let mut out = Map::new();
        for key in ["role", "source", "content"] {
            if let Some(v) = c.get(key) {
                out.insert(key.into(), deep::clone(v));
            }
        }
        return Value::Object(out);
    }
    match c.get("text").and_then(Value::as_str) {
        Some(text) => {
            let source = match c.get("source") {
                Some(plugin) => json!({ "kind": "plugin", "plugin": plugin }),
                None => json!({ "kind": "user" }),
            };
            json!({ "role": "user", "source": source, "content": [{ "type": "text", "text": text }] })
        }
        None => deep::clone(c),
    }
}
