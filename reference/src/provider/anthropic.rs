//! Anthropic Messages tools, both ways: [`tools`] (`{name, description, input_schema}`) and
//! [`schema_of`] back; [`parse_tool_calls`] (an assistant message's `tool_use` blocks) into
//! [`ToolExecutionInput`]s and [`assistant_message`] back, for the history; [`tool_result`] (one
//! `tool_result` block: the text, images as `image` blocks, `is_error: true` for a failure) and
//! [`user_message`], the one user message holding every `tool_result` of a turn, in order, as the API
//! requires.
//!
//! No catalog rule (issue 39).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{ImageSource, ProviderError, split_content};
use crate::definition::ToolSchema;
use crate::execution::ToolExecutionInput;
use crate::result::ToolExecutionResult;

const PROVIDER: &str = "Anthropic";

/// One entry of a request's `tools`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The tool name.
    pub name: String,
    /// What it does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The input's JSON Schema.
    pub input_schema: Value,
}

/// A `tool_use` content block: one call the model made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    /// `"tool_use"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The id a `tool_result` answers (`toolu_…`).
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments, a JSON object.
    pub input: Value,
}

/// The request's `tools` for `schemas` (from [`ToolRuntime::schemas`](crate::ToolRuntime::schemas)).
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools::{ToolSchema, provider::anthropic};
/// use serde_json::json;
/// let schema = ToolSchema { name: "ping".into(), description: "Answer pong".into(), parameters: Arc::new(json!({ "type": "object" })) };
/// let tools = serde_json::to_value(anthropic::tools(&[schema]))?;
/// assert_eq!(tools, json!([{ "name": "ping", "description": "Answer pong", "input_schema": { "type": "object" } }]));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn tools(schemas: &[ToolSchema]) -> Vec<Tool> {
    schemas
        .iter()
        .map(|schema| Tool {
            name: schema.name.clone(),
            description: Some(schema.description.clone()),
            input_schema: crate::value::deep_clone(&schema.parameters),
        })
        .collect()
}

/// A tool as a [`ToolSchema`] (an absent description is empty).
pub fn schema_of(tool: &Tool) -> ToolSchema {
    ToolSchema {
        name: tool.name.clone(),
        description: tool.description.clone().unwrap_or_default(),
        parameters: Arc::new(tool.input_schema.clone()),
    }
}

/// The calls of an assistant message or a whole Messages response (both hold `content`): its
/// `tool_use` blocks, in order; other blocks (text, thinking) are skipped.
///
/// ```
/// use dsh_tools::provider::anthropic;
/// use serde_json::json;
/// let message = json!({ "role": "assistant", "content": [
///     { "type": "text", "text": "Let me check." },
///     { "type": "tool_use", "id": "toolu_1", "name": "weather", "input": { "city": "Oslo" } },
/// ] });
/// let calls = anthropic::parse_tool_calls(&message)?;
/// assert_eq!((calls.len(), calls[0].call_id.as_str()), (1, "toolu_1"));
/// assert_eq!(anthropic::assistant_message(&calls)["content"][0], message["content"][1]);
/// # Ok::<(), dsh_tools::provider::ProviderError>(())
/// ```
pub fn parse_tool_calls(message: &Value) -> Result<Vec<ToolExecutionInput>, ProviderError> {
    let fail = |path: String, reason: String| ProviderError { provider: PROVIDER, path, reason };
    let blocks = match message.get("content") {
        None | Some(Value::Null | Value::String(_)) => return Ok(Vec::new()),
        Some(Value::Array(blocks)) => blocks,
        Some(_) => return Err(fail("content".into(), "must be a string or an array of blocks".into())),
    };
    let mut inputs = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        let call = ToolUse::deserialize(block).map_err(|e| fail(format!("content[{index}]"), e.to_string()))?;
        inputs.push(ToolExecutionInput::new(call.id, call.name, call.input));
    }
    Ok(inputs)
}

/// A call as a `tool_use` block (the reverse of [`parse_tool_calls`]).
pub fn tool_use(input: &ToolExecutionInput) -> ToolUse {
    ToolUse { kind: "tool_use".into(), id: input.call_id.clone(), name: input.name.clone(), input: input.arguments.clone() }
}

/// The assistant message that made `calls`, for the conversation history.
pub fn assistant_message(calls: &[ToolExecutionInput]) -> Value {
    let blocks: Vec<Value> = calls.iter().map(|c| serde_json::to_value(tool_use(c)).unwrap_or(Value::Null)).collect();
    json!({ "role": "assistant", "content": blocks })
}

/// The `tool_result` block answering `call_id`: `content` is the text alone when the result holds no
/// image `resolve` can place, else a list of a text block and `image` blocks; `is_error: true` marks a
/// failure (absent otherwise).
///
/// ```
/// use dsh_tools::provider::{ImageSource, anthropic};
/// use dsh_tools::{ToolExecutionResult, ToolFailure};
/// use serde_json::json;
/// let failed = ToolExecutionResult::from_failure(ToolFailure::message("the weather service is down"));
/// assert_eq!(
///     anthropic::tool_result("toolu_1", &failed, &ImageSource::from_attachment),
///     json!({ "type": "tool_result", "tool_use_id": "toolu_1", "content": "Error: the weather service is down", "is_error": true }),
/// );
/// ```
pub fn tool_result(call_id: &str, result: &ToolExecutionResult, resolve: &dyn Fn(&Value) -> Option<ImageSource>) -> Value {
    let (text, images) = split_content(result.content(), resolve);
    let content = if images.is_empty() {
        Value::String(text)
    } else {
        let mut blocks = Vec::with_capacity(images.len() + 1);
        if !text.is_empty() {
            blocks.push(json!({ "type": "text", "text": text }));
        }
        blocks.extend(images.iter().map(|image| {
            let source = match image {
                ImageSource::Base64 { media_type, data } => json!({ "type": "base64", "media_type": media_type, "data": data }),
                ImageSource::Url(url) => json!({ "type": "url", "url": url }),
            };
            json!({ "type": "image", "source": source })
        }));
        Value::Array(blocks)
    };
    let mut block = Map::new();
    block.insert("type".into(), json!("tool_result"));
    block.insert("tool_use_id".into(), json!(call_id));
    block.insert("content".into(), content);
    if result.is_error() {
        block.insert("is_error".into(), Value::Bool(true));
    }
    Value::Object(block)
}

/// The user message answering a turn: every `(call id, result)` as a `tool_result` block, in order.
pub fn user_message(results: &[(String, ToolExecutionResult)], resolve: &dyn Fn(&Value) -> Option<ImageSource>) -> Value {
    let blocks: Vec<Value> = results.iter().map(|(id, result)| tool_result(id, result, resolve)).collect();
    json!({ "role": "user", "content": blocks })
}
