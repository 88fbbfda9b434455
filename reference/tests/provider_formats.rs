//! The provider formats (`dsh_tools::provider`) against each provider's documented examples: OpenAI's
//! Chat Completions function-calling example (API reference, "Create chat completion", the Functions
//! example: <https://platform.openai.com/docs/api-reference/chat/create>; tool messages and image parts
//! as the function-calling and vision guides show them) and Anthropic's tool-use guide
//! (<https://docs.anthropic.com/en/docs/build-with-claude/tool-use>: the `get_weather` tool, its
//! `tool_use` response, and the `tool_result` examples with text, an image and an error), both ways,
//! through a real `ToolRuntime`.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use dsh_tools::provider::{ImageSource, UNRESOLVED_IMAGE, anthropic, openai};
use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolExecutionResult, ToolFailure, ToolRuntime, content};
use serde_json::{Value, json};

/// The weather tool of both providers' examples, registered with the documented parameters.
fn runtime_with(name: &str, parameters: Value) -> (ToolRuntime, dsh_tools::Registration) {
    let rt = ToolRuntime::new(Default::default());
    let definition = ToolDefinition::new(
        name,
        "Get the current weather in a given location",
        Parameters::Raw(parameters),
        OutputDeclaration { schema: json!({}), render: Arc::new(|_, v| Ok(vec![content::text(v.to_string())])), presentation_meta: None },
        Arc::new(|args, _| Box::pin(async move { Ok((*args).clone()) })),
    );
    let registration = rt.register(definition, None).unwrap();
    (rt, registration)
}

fn success(blocks: Vec<Value>) -> ToolExecutionResult {
    ToolExecutionResult::Success { value: json!(null), content: blocks, meta: None, additional_contexts: Vec::new(), concludes_turn: false }
}

fn openai_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "location": { "type": "string", "description": "The city and state, e.g. San Francisco, CA" },
            "unit": { "type": "string", "enum": ["celsius", "fahrenheit"] }
        },
        "required": ["location"]
    })
}

#[test]
fn openai_tools_match_the_documented_request() {
    let (rt, _tool) = runtime_with("get_current_weather", openai_parameters());
    let documented = json!([{
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": openai_parameters()
        }
    }]);
    let tools = openai::tools(&rt.schemas(None));
    assert_eq!(serde_json::to_value(&tools).unwrap(), documented);
    let back = openai::schema_of(&serde_json::from_value::<Vec<openai::Tool>>(documented).unwrap()[0]);
    assert_eq!((back.name.as_str(), &*back.parameters), ("get_current_weather", &openai_parameters()));
}

fn openai_response() -> Value {
    json!({
        "id": "chatcmpl-abc123",
        "object": "chat.completion",
        "created": 1699896916,
        "model": "gpt-4o-mini",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_abc123",
                    "type": "function",
                    "function": { "name": "get_current_weather", "arguments": "{\n\"location\": \"Boston, MA\"\n}" }
                }]
            },
            "logprobs": null,
            "finish_reason": "tool_calls"
        }],
        "usage": { "prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99 }
    })
}

#[tokio::test]
async fn openai_tool_calls_parse_run_and_answer_as_documented() {
    let (rt, _tool) = runtime_with("get_current_weather", openai_parameters());
    let calls = openai::parse_tool_calls(&openai_response()).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].call_id.as_str(), calls[0].name.as_str()), ("call_abc123", "get_current_weather"));
    assert_eq!(calls[0].arguments, json!({ "location": "Boston, MA" }));
    // Back into the history: the same call, arguments re-serialized.
    let history = openai::assistant_message(&calls);
    assert_eq!(history["tool_calls"][0]["function"]["arguments"], r#"{"location":"Boston, MA"}"#);
    assert_eq!(openai::parse_tool_calls(&history).unwrap()[0].arguments, calls[0].arguments);

    let call = calls.into_iter().next().unwrap();
    let result = rt.execute(call).await;
    let messages = openai::tool_messages(&[("call_abc123".to_owned(), result)], &ImageSource::from_attachment);
    assert_eq!(messages, [json!({ "role": "tool", "tool_call_id": "call_abc123", "content": r#"{"location":"Boston, MA"}"# })]);
}

#[test]
fn openai_images_follow_the_tool_messages_and_errors_read_as_errors() {
    let chart = success(vec![content::text("the chart"), content::image(json!({ "data": "iVBORw0KGgo=", "mimeType": "image/png" }))]);
    let remote = success(vec![content::image(json!({ "url": "https://example.com/a.jpg" })), content::image(json!({ "id": "opaque" }))]);
    let failed = ToolExecutionResult::from_failure(ToolFailure::message("ConnectionError: the weather service API is not available (HTTP 500)"));
    let results = [("call_1".to_owned(), chart), ("call_2".to_owned(), remote), ("call_3".to_owned(), failed)];
    let messages = openai::tool_messages(&results, &ImageSource::from_attachment);
    assert_eq!(
        messages,
        [
            json!({ "role": "tool", "tool_call_id": "call_1", "content": "the chart\n[1 image follows in the next message]" }),
            json!({ "role": "tool", "tool_call_id": "call_2", "content": format!("{UNRESOLVED_IMAGE}\n[1 image follows in the next message]") }),
            json!({ "role": "tool", "tool_call_id": "call_3", "content": "Error: ConnectionError: the weather service API is not available (HTTP 500)" }),
            json!({ "role": "user", "content": [
                { "type": "text", "text": "Images from tool call call_1:" },
                { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw0KGgo=" } },
                { "type": "text", "text": "Images from tool call call_2:" },
                { "type": "image_url", "image_url": { "url": "https://example.com/a.jpg" } }
            ]}),
        ]
    );
}

#[test]
fn openai_parsing_keeps_bad_argument_text_and_names_what_it_cannot_read() {
    let message = json!({ "role": "assistant", "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{not json" } }] });
    assert_eq!(openai::parse_tool_calls(&message).unwrap()[0].arguments, json!("{not json"));
    assert!(openai::parse_tool_calls(&json!({ "role": "assistant", "content": "Hi" })).unwrap().is_empty());
    let custom = json!({ "tool_calls": [{ "id": "c1", "type": "custom", "function": { "name": "f", "arguments": "{}" } }] });
    assert_eq!(
        openai::parse_tool_calls(&custom).unwrap_err().to_string(),
        r#"OpenAI message at tool_calls[0].type: "custom" calls are not supported (only "function")"#
    );
    let error = openai::parse_tool_calls(&json!({ "tool_calls": [{ "type": "function" }] })).unwrap_err();
    assert_eq!((error.path.as_str(), error.reason.as_str()), ("tool_calls[0]", "missing field `id`"));
}

fn anthropic_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "location": { "type": "string", "description": "The city and state, e.g. San Francisco, CA" },
            "unit": { "type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit of temperature, either \"celsius\" or \"fahrenheit\"" }
        },
        "required": ["location"]
    })
}

#[tokio::test]
async fn anthropic_tools_calls_and_results_match_the_documented_examples() {
    let (rt, _tool) = runtime_with("get_weather", anthropic_schema());
    let documented_tool = json!({ "name": "get_weather", "description": "Get the current weather in a given location", "input_schema": anthropic_schema() });
    assert_eq!(serde_json::to_value(anthropic::tools(&rt.schemas(None))).unwrap(), json!([documented_tool.clone()]));
    assert_eq!(anthropic::schema_of(&serde_json::from_value(documented_tool).unwrap()).name, "get_weather");

    let response = json!({
        "id": "msg_01Aq9w938a90dw8q",
        "model": "claude-opus-4-1-20250805",
        "stop_reason": "tool_use",
        "role": "assistant",
        "content": [
            { "type": "text", "text": "I'll check the current weather in San Francisco for you." },
            { "type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": { "location": "San Francisco, CA", "unit": "celsius" } }
        ]
    });
    let calls = anthropic::parse_tool_calls(&response).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].call_id.as_str(), calls[0].name.as_str()), ("toolu_01A09q90qw90lq917835lq9", "get_weather"));
    assert_eq!(anthropic::assistant_message(&calls)["content"][0], response["content"][1]);
    let result = rt.execute(calls.into_iter().next().unwrap()).await;
    assert!(!result.is_error(), "{}", result.text());

    // The documented tool_result examples: text only, text with an image, an error.
    let resolve = &ImageSource::from_attachment;
    assert_eq!(
        anthropic::tool_result("toolu_01A09q90qw90lq917835lq9", &success(vec![content::text("15 degrees")]), resolve),
        json!({ "type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "15 degrees" })
    );
    let with_image = success(vec![content::text("15 degrees"), content::image(json!({ "data": "/9j/4AAQSkZJRg...", "mimeType": "image/jpeg" }))]);
    assert_eq!(
        anthropic::tool_result("toolu_01A09q90qw90lq917835lq9", &with_image, resolve),
        json!({
            "type": "tool_result",
            "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
            "content": [
                { "type": "text", "text": "15 degrees" },
                { "type": "image", "source": { "type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQSkZJRg..." } }
            ]
        })
    );
    let failed = ToolExecutionResult::from_failure(ToolFailure::message("ConnectionError: the weather service API is not available (HTTP 500)"));
    assert_eq!(
        anthropic::user_message(&[("toolu_01A09q90qw90lq917835lq9".to_owned(), failed)], resolve),
        json!({ "role": "user", "content": [{
            "type": "tool_result",
            "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
            "content": "Error: ConnectionError: the weather service API is not available (HTTP 500)",
            "is_error": true
        }]})
    );
}

#[test]
fn anthropic_parsing_skips_other_blocks_and_names_a_broken_tool_use() {
    assert!(anthropic::parse_tool_calls(&json!({ "role": "assistant", "content": "Hello" })).unwrap().is_empty());
    let error = anthropic::parse_tool_calls(&json!({ "content": [{ "type": "text", "text": "x" }, { "type": "tool_use", "id": "t1" }] })).unwrap_err();
    assert_eq!(error.to_string(), "Anthropic message at content[1]: missing field `name`");
}
