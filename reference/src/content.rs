//! Content blocks: the model-facing `{ "type": "text", "text": … }` values a tool renders and a result
//! carries, built without hand-written JSON ([`text`], [`image`]), and read back as plain text
//! ([`text_of`]).

use serde_json::{Map, Value};

/// A text block: `{ "type": "text", "text": <text> }`.
///
/// ```
/// let block = dsh_tools::content::text("hello");
/// assert_eq!(block, serde_json::json!({ "type": "text", "text": "hello" }));
/// ```
pub fn text(text: impl Into<String>) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), Value::String("text".into()));
    block.insert("text".into(), Value::String(text.into()));
    Value::Object(block)
}

/// An image block: `{ "type": "image", "attachment": <attachment> }`, where `attachment` is the agent's
/// durable image reference (its attachment service defines the shape). In Code Mode, a sub-call's image
/// block reaches the model as a deferred user message rather than inside the program's result.
pub fn image(attachment: Value) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), Value::String("image".into()));
    block.insert("attachment".into(), attachment);
    Value::Object(block)
}

/// The text of the text blocks among `blocks`, joined by newlines; other blocks are skipped.
///
/// ```
/// use dsh_tools::content::{image, text, text_of};
/// let blocks = [text("one"), image(serde_json::json!({ "id": "img-1" })), text("two")];
/// assert_eq!(text_of(&blocks), "one\ntwo");
/// ```
pub fn text_of(blocks: &[Value]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    texts.join("\n")
}
