//! Provider formats: the JSON shapes two chat APIs use for function tools, converted both ways —
//! [`openai`] (Chat Completions: `{"type": "function", "function": {…}}` tools, `tool_calls` with JSON-text
//! arguments, `role: "tool"` messages) and [`anthropic`] (Messages: `input_schema` tools, `tool_use` and
//! `tool_result` blocks). Each module turns [`ToolSchema`](crate::ToolSchema)s into the provider's tool
//! list, the model's tool calls into [`ToolExecutionInput`](crate::ToolExecutionInput)s (and back, for the
//! history), and a turn's results into the messages that answer them, images and errors included.
//!
//! The types are this crate's own small serde structs rather than a provider SDK crate's: the crates that
//! model these APIs (`async-openai`, `anthropic-sdk`, …) bring an HTTP client and hundreds of types an
//! embedder may not want, each pinned to one SDK's release cadence, while the handful of shapes needed
//! here are stable and documented. The tests check them against the providers' documented examples
//! (`tests/provider_formats.rs`).
//!
//! An image block's `attachment` is the agent's own reference ([`crate::content::image`]); a provider
//! needs bytes or a URL, so the conversions take a resolver — [`ImageSource::from_attachment`] reads the
//! common `{ "url" }` and `{ "data", "mimeType" }` shapes. An image the resolver cannot place is
//! replaced by the text [`UNRESOLVED_IMAGE`].
//!
//! No catalog rule: the provider shapes are not upstream `dsh-tools` behaviour (issue 39).

pub mod anthropic;
pub mod openai;

use std::fmt;

use serde_json::Value;

/// The text that stands in for an image block the resolver could not turn into an [`ImageSource`].
pub const UNRESOLVED_IMAGE: &str = "[an image the host could not attach]";

/// Where a provider reads an image from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageSource {
    /// Inline bytes, base64-encoded, with their media type (`image/png`).
    Base64 {
        /// The media type.
        media_type: String,
        /// The base64 text.
        data: String,
    },
    /// A URL the provider fetches.
    Url(String),
}

impl ImageSource {
    /// The common attachment shapes: `{ "url": … }`, or `{ "data": <base64>, "mimeType" | "mediaType" |
    /// "media_type": … }` (MCP's image content uses `data` and `mimeType`). Anything else is `None`.
    ///
    /// ```
    /// use dsh_tools::provider::ImageSource;
    /// use serde_json::json;
    /// let png = ImageSource::from_attachment(&json!({ "data": "iVBORw0KGgo=", "mimeType": "image/png" }));
    /// assert_eq!(png, Some(ImageSource::Base64 { media_type: "image/png".into(), data: "iVBORw0KGgo=".into() }));
    /// assert_eq!(ImageSource::from_attachment(&json!({ "id": "img-7" })), None);
    /// ```
    pub fn from_attachment(attachment: &Value) -> Option<Self> {
        if let Some(url) = attachment.get("url").and_then(Value::as_str) {
            return Some(Self::Url(url.to_owned()));
        }
        let data = attachment.get("data").and_then(Value::as_str)?;
        let media_type = ["mimeType", "mediaType", "media_type"].iter().find_map(|k| attachment.get(*k).and_then(Value::as_str))?;
        Some(Self::Base64 { media_type: media_type.to_owned(), data: data.to_owned() })
    }

    /// The source as one URL (`data:<media type>;base64,<data>` for inline bytes).
    pub fn to_url(&self) -> String {
        match self {
            Self::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
            Self::Url(url) => url.clone(),
        }
    }
}

/// A provider message that could not be read, naming where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderError {
    /// Which format (`OpenAI`, `Anthropic`).
    pub provider: &'static str,
    /// Where in the message (`tool_calls[1].function.name`).
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} message at {}: {}", self.provider, self.path, self.reason)
    }
}

impl std::error::Error for ProviderError {}

/// A result's content split into the text blocks' text (joined by newlines, an unresolved image as
/// [`UNRESOLVED_IMAGE`]) and the resolved images, in order.
pub(crate) fn split_content(content: &[Value], resolve: &dyn Fn(&Value) -> Option<ImageSource>) -> (String, Vec<ImageSource>) {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(block.get("text").and_then(Value::as_str).unwrap_or_default().to_owned()),
            Some("image") => match block.get("attachment").and_then(resolve) {
                Some(image) => images.push(image),
                None => texts.push(UNRESOLVED_IMAGE.to_owned()),
            },
            _ => {}
        }
    }
    (texts.join("\n"), images)
}
