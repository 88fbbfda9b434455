//! A small MCP server over stdio, built with `rmcp` (the official Rust SDK), for the `mcp_code_mode`
//! example to connect to: `add` (structured output, read-only), `word_stats` (structured output with a
//! `format`-carrying schema, read-only) and `shout` (text output, an optional argument, and a failure
//! for empty input).
//!
//! Run it alone with `cargo run -p dsh-tools --example mcp_server` and speak JSON-RPC on stdin.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{Json, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

#[derive(Deserialize, schemars::JsonSchema)]
struct AddRequest {
    /// The left operand.
    a: i64,
    /// The right operand.
    b: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct StatsRequest {
    text: String,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Stats {
    words: u32,
    chars: u32,
    /// Where the statistics definition lives.
    #[schemars(url)]
    docs: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ShoutRequest {
    text: String,
    /// How many exclamation marks (default 1).
    marks: Option<u8>,
}

#[derive(Clone)]
struct Demo {
    #[allow(dead_code)] // read by the tool_handler macro
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Demo {
    fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    #[tool(description = "Add two integers", annotations(read_only_hint = true))]
    async fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> Json<Sum> {
        Json(Sum { sum: a + b })
    }

    #[tool(description = "Count the words and characters of a text", annotations(read_only_hint = true))]
    async fn word_stats(&self, Parameters(StatsRequest { text }): Parameters<StatsRequest>) -> Json<Stats> {
        let words = u32::try_from(text.split_whitespace().count()).unwrap_or(u32::MAX);
        let chars = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
        Json(Stats { words, chars, docs: "https://example.com/stats".into() })
    }

    #[tool(description = "Upper-case a text and add exclamation marks")]
    async fn shout(&self, Parameters(ShoutRequest { text, marks }): Parameters<ShoutRequest>) -> Result<String, String> {
        if text.is_empty() {
            return Err("nothing to shout".into());
        }
        Ok(format!("{}{}", text.to_uppercase(), "!".repeat(usize::from(marks.unwrap_or(1)))))
    }
}

#[tool_handler]
impl ServerHandler for Demo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions("dsh-tools example server")
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Demo::new().serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
