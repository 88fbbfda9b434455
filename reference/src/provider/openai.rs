//! OpenAI Chat Completions function tools, both ways: [`tools`] (`{"type": "function", "function": {name,
//! description, parameters}}`) and [`schema_of`] back; [`parse_tool_calls`] (an assistant message's
//! `tool_calls`, arguments as JSON text) into [`ToolExecutionInput`]s and [`assistant_message`] back, for
//! the history; [`tool_messages`] (one `{"role": "tool", "tool_call_id", "content"}` per result, in
//! order). A tool message holds text only, so a result's images follow in one `role: "user"` message
//! after the tool messages (`image_url` parts), which is where the API accepts them.
//!
//! Failures need no flag: their content already reads `Error: <message>`.
//!
//! No catalog rule (issue 39).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{ImageSource, ProviderError, split_content};
use crate::definition::ToolSchema;
use crate::execution::ToolExecutionInput;
use crate::result::ToolExecutionResult;

const PROVIDER: &str = "OpenAI";

/// One entry of a request's `tools`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// Always `"function"` for the tools this crate runs.
    #[serde(rename = "type")]
    pub kind: String,
    /// The function.
    pub function: FunctionDefinition,
}

/// A function tool's definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionDefinition {
    /// The tool name.
    pub name: String,
    /// What it does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The parameters' JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

/// One entry of an assistant message's `tool_calls`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id the tool message answers (`call_abc123`).
    pub id: String,
    /// `"function"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The function called.
    pub function: FunctionCall,
}

/// The function a tool call names, with its arguments as JSON text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool name.
    pub name: String,
    /// The arguments, as the model wrote them: JSON text.
    pub arguments: String,
}

/// The request's `tools` for `schemas` (from [`ToolRuntime::schemas`](crate::ToolRuntime::schemas)).
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools::{ToolSchema, provider::openai};
/// use serde_json::json;
/// let schema = ToolSchema { name: "ping".into(), description: "Answer pong".into(), parameters: Arc::new(json!({ "type": "object" })) };
/// let tools = serde_json::to_value(openai::tools(&[schema]))?;
/// assert_eq!(tools, json!([{ "type": "function", "function": { "name": "ping", "description": "Answer pong", "parameters": { "type": "object" } } }]));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn tools(schemas: &[ToolSchema]) -> Vec<Tool> {
    schemas
        .iter()
        .map(|schema| Tool {
            kind: "function".into(),
            function: FunctionDefinition {
                name: schema.name.clone(),
                description: Some(schema.description.clone()),
                parameters: Some(crate::value::deep_clone(&schema.parameters)),
            },
        })
        .collect()
}

/// A function tool as a [`ToolSchema`] (an absent description is empty, absent parameters an open
/// object, as the API reads them).
pub fn schema_of(tool: &Tool) -> ToolSchema {
    let function = &tool.function;
    ToolSchema {
        name: function.name.clone(),
        description: function.description.clone().unwrap_or_default(),
        parameters: Arc::new(function.parameters.clone().unwrap_or_else(|| json!({ "type": "object" }))),
    }
}

/// The calls of an assistant message (`{"role": "assistant", "tool_calls": [...]}`), or of a whole
/// `chat.completion` response (its first choice's message), in order; none when it has no `tool_calls`.
/// Arguments that are not JSON text are passed on as the raw string, so the call still gets its one
/// result: a typed or MCP tool's argument check rejects it (`arguments is not of type "object"`) and the
/// model reads why. Only `"function"` calls are accepted.
///
/// ```
/// use dsh_tools::provider::openai;
/// use serde_json::json;
/// let response = json!({ "object": "chat.completion", "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
///     "role": "assistant", "content": null,
///     "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "weather", "arguments": "{\"city\":\"Oslo\"}" } }]
/// } }] });
/// let calls = openai::parse_tool_calls(&response)?;
/// assert_eq!((calls[0].call_id.as_str(), calls[0].name.as_str()), ("call_1", "weather"));
/// assert_eq!(calls[0].arguments, json!({ "city": "Oslo" }));
/// // Back into the history, unchanged but for the arguments' spacing:
/// assert_eq!(openai::assistant_message(&calls)["tool_calls"], response["choices"][0]["message"]["tool_calls"]);
/// # Ok::<(), dsh_tools::provider::ProviderError>(())
/// ```
pub fn parse_tool_calls(message: &Value) -> Result<Vec<ToolExecutionInput>, ProviderError> {
    let (message, prefix) = match message.get("choices") {
        Some(choices) => (choices.get(0).and_then(|c| c.get("message")).unwrap_or(&Value::Null), "choices[0].message."),
        None => (message, ""),
    };
    let fail = |path: String, reason: String| ProviderError { provider: PROVIDER, path: format!("{prefix}{path}"), reason };
    let calls = match message.get("tool_calls") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(calls)) => calls,
        Some(_) => return Err(fail("tool_calls".into(), "must be an array".into())),
    };
    let mut inputs = Vec::with_capacity(calls.len());
    for (index, call) in calls.iter().enumerate() {
        let call = ToolCall::deserialize(call).map_err(|e| fail(format!("tool_calls[{index}]"), e.to_string()))?;
        if call.kind != "function" {
            return Err(fail(format!("tool_calls[{index}].type"), format!("\"{}\" calls are not supported (only \"function\")", call.kind)));
        }
        let arguments = serde_json::from_str(&call.function.arguments).unwrap_or(Value::String(call.function.arguments));
        inputs.push(ToolExecutionInput::new(call.id, call.function.name, arguments));
    }
    Ok(inputs)
}

/// A call as the assistant's tool call (the reverse of [`parse_tool_calls`]).
pub fn tool_call(input: &ToolExecutionInput) -> ToolCall {
    ToolCall {
        id: input.call_id.clone(),
        kind: "function".into(),
        function: FunctionCall { name: input.name.clone(), arguments: input.arguments.to_string() },
    }
}

/// The assistant message that made `calls` (`content: null`), for the conversation history.
pub fn assistant_message(calls: &[ToolExecutionInput]) -> Value {
    let calls: Vec<Value> = calls.iter().map(|c| serde_json::to_value(tool_call(c)).unwrap_or(Value::Null)).collect();
    json!({ "role": "assistant", "content": null, "tool_calls": calls })
}

/// The messages that answer a turn: one tool message per `(call id, result)`, in order, then — when any
/// result holds images `resolve` can place — one user message carrying them as `image_url` parts, each
/// call's introduced by a text part naming the call. A tool message whose images moved says so.
///
/// ```
/// use dsh_tools::provider::{ImageSource, openai};
/// use dsh_tools::{ToolExecutionResult, ToolFailure};
/// use serde_json::json;
/// let failed = ToolExecutionResult::from_failure(ToolFailure::message("no such city"));
/// let messages = openai::tool_messages(&[("call_1".to_owned(), failed)], &ImageSource::from_attachment);
/// assert_eq!(messages, [json!({ "role": "tool", "tool_call_id": "call_1", "content": "Error: no such city" })]);
/// ```
pub fn tool_messages(results: &[(String, ToolExecutionResult)], resolve: &dyn Fn(&Value) -> Option<ImageSource>) -> Vec<Value> {
    let mut messages = Vec::with_capacity(results.len() + 1);
    let mut parts = Vec::new();
    for (call_id, result) in results {
        let (mut text, images) = split_content(result.content(), resolve);
        if !images.is_empty() {
            let note = match images.len() {
                1 => "[1 image follows in the next message]".to_owned(),
                n => format!("[{n} images follow in the next message]"),
            };
            text = if text.is_empty() { note } else { format!("{text}\n{note}") };
            parts.push(json!({ "type": "text", "text": format!("Images from tool call {call_id}:") }));
            parts.extend(images.iter().map(|image| json!({ "type": "image_url", "image_url": { "url": image.to_url() } })));
        }
        let mut message = Map::new();
        message.insert("role".into(), json!("tool"));
        message.insert("tool_call_id".into(), json!(call_id));
        message.insert("content".into(), Value::String(text));
        messages.push(Value::Object(message));
    }
    if !parts.is_empty() {
        messages.push(json!({ "role": "user", "content": parts }));
    }
    messages
}
