//! [`ToolExecutionResult`]: failures are values. Canonical constructors for the fixed outcomes (thrown
//! errors, denials, the two cancellation results) with upstream's exact texts, and the upstream JSON shape.
//!
//! Spec: OUT-005, PIPE-003, PIPE-009, PIPE-013, PIPE-015, UNK-001, PIPE-020, FIN-010.

use serde_json::{Map, Value};

use crate::error::{ErrorCode, ErrorInfo, ToolFailure};
use crate::value::deep_clone;

/// The `error` of a failed result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    /// Human-readable message.
    pub message: String,
    /// `{ name, code }` for `HarnessError`-class failures; `None` for plain errors and denials.
    pub info: Option<ErrorInfo>,
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.info {
            Some(info) => write!(f, "{} ({}): {}", info.name, info.code, self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ToolError {}

/// One execution's final outcome.
#[derive(Clone, Debug)]
pub enum ToolExecutionResult {
    /// The canonical value plus its durable presentation.
    Success {
        /// Canonical value (validated against the output schema).
        value: Value,
        /// Model-facing content blocks.
        content: Vec<Value>,
        /// Presentation metadata.
        meta: Option<Value>,
        /// Contexts for the loop's post-result FIFO (omitted from JSON when empty).
        additional_contexts: Vec<Value>,
        /// The agent loop ends the turn after committing this result (the body called
        /// [`crate::ToolRunContext::conclude_turn`]); only successes carry it.
        concludes_turn: bool,
    },
    /// A failure; no value.
    Failure {
        /// Message and optional info.
        error: ToolError,
        /// Model-facing content blocks.
        content: Vec<Value>,
        /// Presentation metadata.
        meta: Option<Value>,
        /// Contexts for the loop's post-result FIFO (omitted from JSON when empty).
        additional_contexts: Vec<Value>,
    },
}

/// `[{ "type": "text", "text": <text> }]`.
pub(crate) fn text_content(text: String) -> Vec<Value> {
    let mut block = Map::new();
    block.insert("type".into(), Value::String("text".into()));
    block.insert("text".into(), Value::String(text));
    vec![Value::Object(block)]
}

impl ToolExecutionResult {
    /// Whether this is a failure.
    pub fn is_error(&self) -> bool {
        matches!(self, Self::Failure { .. })
    }

    /// Whether the turn ends after this result: a success whose body called
    /// [`crate::ToolRunContext::conclude_turn`] (failures never conclude a turn).
    pub fn concludes_turn(&self) -> bool {
        matches!(self, Self::Success { concludes_turn: true, .. })
    }

    /// The content blocks.
    pub fn content(&self) -> &[Value] {
        match self {
            Self::Success { content, .. } | Self::Failure { content, .. } => content,
        }
    }

    /// The text of the content's text blocks, joined by newlines: what a chat API's tool message wants.
    /// A failure's text is `Error: <message>` unless a hook replaced the content.
    pub fn text(&self) -> String {
        crate::content::text_of(self.content())
    }

    /// The additional contexts.
    pub fn additional_contexts(&self) -> &[Value] {
        match self {
            Self::Success { additional_contexts, .. } | Self::Failure { additional_contexts, .. } => {
                additional_contexts
            }
        }
    }

    pub(crate) fn additional_contexts_mut(&mut self) -> &mut Vec<Value> {
        match self {
            Self::Success { additional_contexts, .. } | Self::Failure { additional_contexts, .. } => {
                additional_contexts
            }
        }
    }

    pub(crate) fn content_mut(&mut self) -> &mut Vec<Value> {
        match self {
            Self::Success { content, .. } | Self::Failure { content, .. } => content,
        }
    }

    /// The error code, if the failure carries info.
    pub fn error_code(&self) -> Option<&ErrorCode> {
        match self {
            Self::Failure { error: ToolError { info: Some(info), .. }, .. } => Some(&info.code),
            _ => None,
        }
    }

    /// A thrown failure (upstream `toolErrorResult`): content `Error: <message>`, info only for
    /// `HarnessError`-class failures.
    pub fn from_failure(failure: ToolFailure) -> Self {
        Self::Failure {
            content: text_content(format!("Error: {}", failure.message)),
            error: ToolError { message: failure.message, info: failure.info },
            meta: None,
            additional_contexts: Vec::new(),
        }
    }

    /// A policy denial: content `Error: <reason>`, no info.
    pub fn denial(reason: String) -> Self {
        Self::from_failure(ToolFailure::message(reason))
    }

    /// `ABORTED`: cancellation after the body was invoked; keeps the prior result's contexts.
    pub fn aborted(additional_contexts: Vec<Value>) -> Self {
        let mut result = Self::from_failure(ToolFailure::aborted());
        *result.additional_contexts_mut() = additional_contexts;
        result
    }

    /// `ABORTED_BEFORE_DISPATCH`: cancellation before the body was invoked; keeps the prior contexts.
    pub fn aborted_before_dispatch(additional_contexts: Vec<Value>) -> Self {
        let mut result = Self::from_failure(ToolFailure::harness(
            "tool call aborted before dispatch",
            "AbortError",
            ErrorCode::ABORTED_BEFORE_DISPATCH,
        ));
        *result.additional_contexts_mut() = additional_contexts;
        result
    }

    /// Upstream's JSON shape, keys in upstream order: success
    /// `{isError, content, meta?, additionalContexts?, concludesTurn?, value}`, failure
    /// `{isError, error: {message, info?: {name, code}}, content, meta?, additionalContexts?}`.
    /// Deep values are copied without recursion.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        match self {
            Self::Success { value, content, meta, additional_contexts, concludes_turn } => {
                map.insert("isError".into(), Value::Bool(false));
                presentation(&mut map, content, meta, additional_contexts);
                if *concludes_turn {
                    map.insert("concludesTurn".into(), Value::Bool(true));
                }
                map.insert("value".into(), deep_clone(value));
            }
            Self::Failure { error, content, meta, additional_contexts } => {
                map.insert("isError".into(), Value::Bool(true));
                let mut err = Map::new();
                err.insert("message".into(), Value::String(error.message.clone()));
                if let Some(info) = &error.info {
                    let mut i = Map::new();
                    i.insert("name".into(), Value::String(info.name.clone()));
                    i.insert("code".into(), Value::String(info.code.as_str().to_owned()));
                    err.insert("info".into(), Value::Object(i));
                }
                map.insert("error".into(), Value::Object(err));
                presentation(&mut map, content, meta, additional_contexts);
            }
        }
        Value::Object(map)
    }
}

fn presentation(map: &mut Map<String, Value>, content: &[Value], meta: &Option<Value>, contexts: &[Value]) {
    map.insert("content".into(), Value::Array(content.iter().map(deep_clone).collect()));
    if let Some(meta) = meta {
        map.insert("meta".into(), deep_clone(meta));
    }
    if !contexts.is_empty() {
        map.insert("additionalContexts".into(), Value::Array(contexts.iter().map(deep_clone).collect()));
    }
}
