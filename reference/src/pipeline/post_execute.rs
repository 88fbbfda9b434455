//! The `tools/post-execute` waterfall over a dispatched (or denied) result: the chain is snapshotted when
//! the stage starts; the end of the chain accepts. Applies the decision: block → valueless failure with
//! the feedback (message: text blocks joined by newlines, other blocks as `[<type> content]`, or
//! `tool result blocked by post-execute policy` when empty) and only the decision's contexts; accept →
//! content replacement, or value replacement (revalidated and re-rendered, successes only), with the
//! result's contexts followed by the decision's.
//!
//! A value replacement re-resolves the tool through the `code` collapse.
//!
//! Spec: OUT-012, UNK-008, UNK-012, PIPE-008, CODE-006, CANC-009, POST-001..POST-010, CANC-010, CANC-012.

use std::sync::Arc;

use serde_json::Value;

use crate::callback::Contained;
use crate::error::ToolFailure;
use crate::hooks::{PostExecuteListener, PostExecuteOutcome, PostNext, PostToolDecision, Snapshot};
use crate::registry::Registry;
use crate::result::{ToolError, ToolExecutionResult};
use crate::value::js_string;

use super::entry::Call;
use super::output;

/// A snapshot of the post-execute listeners.
pub(crate) type Chain = Snapshot<Arc<dyn PostExecuteListener>>;


/// Start `chain` (the listeners' snapshot when one applies to the call, `HookList::snapshot_for`) over
/// `result`. The caller awaits the returned future where it stands (no box of its own: it holds only the
/// first listener's boxed future), then hands its output to [`settle`].
pub(crate) fn start<'a>(chain: &'a Chain, call: &'a Call, result: &'a ToolExecutionResult) -> Contained<'a, PostExecuteOutcome> {
    Contained(PostNext { chain, exec: &call.exec, result }.run())
}

/// Apply what the chain [`start`]ed resolved to: its decision to `result`, in place (a value replacement
/// re-resolves the tool in `registry`); `Err` is a thrown failure, or a panic's message (the caller
/// publishes it as is).
pub(crate) fn settle(
    registry: &Registry,
    call: &Call,
    result: &mut ToolExecutionResult,
    outcome: Result<PostExecuteOutcome, String>,
) -> Result<(), ToolFailure> {
    let decision = match outcome {
        Ok(outcome) => outcome?,
        Err(panic) => return Err(ToolFailure::message(panic)),
    };
    apply(registry, call, result, decision)
}

/// Upstream's `failureMessageFromContent`, with JavaScript's conversions: each part's `text` when its
/// `type` is `"text"` (a missing or `null` text joining as nothing), else `[<String(type)> content]`
/// (`undefined` for a part that is no object or has no type); the parts joined with newlines; the default
/// message when that is empty. A `null` part throws as reading a property of `null` does.
fn failure_message(feedback: &[Value]) -> Result<String, ToolFailure> {
    let mut parts = Vec::with_capacity(feedback.len());
    for block in feedback {
        let ty = match block {
            Value::Object(members) => members.get("type"),
            Value::Null => return Err(ToolFailure::message("Cannot read properties of null (reading 'type')")),
            _ => None,
        };
        parts.push(match ty {
            Some(Value::String(ty)) if ty == "text" => match block.get("text") {
                None | Some(Value::Null) => String::new(),
                Some(text) => js_string(text),
            },
            Some(ty) => format!("[{} content]", js_string(ty)),
            None => "[undefined content]".to_owned(),
        });
    }
    let text = parts.join("\n");
    Ok(if text.is_empty() { "tool result blocked by post-execute policy".to_owned() } else { text })
}

fn apply(registry: &Registry, call: &Call, result: &mut ToolExecutionResult, decision: PostToolDecision) -> Result<(), ToolFailure> {
    match decision {
        PostToolDecision::Block { feedback, additional_contexts } => {
            let blocked = ToolExecutionResult::Failure {
                error: ToolError { message: failure_message(&feedback)?, info: None },
                content: feedback,
                meta: None,
                additional_contexts,
            };
            if let ToolExecutionResult::Success { value, .. } = std::mem::replace(result, blocked) {
                crate::value::dismantle(value);
            }
            Ok(())
        }
        PostToolDecision::Accept { content: Some(_), value: Some(_), .. } => Err(ToolFailure::message(
            "tools/post-execute accept decision cannot replace both value and content",
        )),
        PostToolDecision::Accept { value: Some(value), additional_contexts, .. } => {
            if result.is_error() {
                return Err(ToolFailure::message("tools/post-execute cannot replace the value of a failed result"));
            }
            let exec = &call.exec;
            let Some(tool) = registry.resolve_execution(&exec.name, exec.agent.as_ref(), exec.parent.is_some()) else {
                return Err(ToolFailure::unknown_tool(&exec.name));
            };
            let mut replaced = output::success(exec, &tool, value)?;
            let mut contexts = std::mem::take(result.additional_contexts_mut());
            contexts.extend(additional_contexts);
            *replaced.additional_contexts_mut() = contexts;
            if let ToolExecutionResult::Success { value, .. } = std::mem::replace(result, replaced) {
                crate::value::dismantle(value);
            }
            Ok(())
        }
        PostToolDecision::Accept { content, value: None, additional_contexts } => {
            if let Some(content) = content {
                *result.content_mut() = content;
            }
            result.additional_contexts_mut().extend(additional_contexts);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::failure_message;

    /// A `null` part is read as JavaScript reads a property of `null`: the message fails to build (the
    /// scenario format types parts as objects, so only this test reaches it); a non-object part has no type.
    #[test]
    fn null_and_non_object_parts_follow_javascript() {
        let null_part = failure_message(&[json!({"type": "text", "text": "a"}), json!(null)]);
        assert!(null_part.is_err_and(|e| e.to_string().contains("Cannot read properties of null (reading 'type')")));
        let number_part = failure_message(&[json!(7)]);
        assert_eq!(number_part.ok().as_deref(), Some("[undefined content]"));
    }
}
