//! Tool lists as JSON, for the `dsh-sdk` command and tests: either a list of SDK tool schemas
//! (`name`, `description`, `parameters`, `output`) or an MCP `tools/list` result
//! (`{ "tools": [{ name, description, inputSchema, outputSchema? }] }`); each entry may use either
//! spelling. A non-string description reads as absent (upstream renders it so). A schema value is taken as is (the renderers degrade what they cannot express); only
//! the list's own structure is checked, and an error names the tool and the JSON path.
//!
//! Spec: SDK-024 (what the list itself must be; its schemas are never checked).

use std::fmt;

use serde_json::{Map, Value};

use super::SdkToolSchema;

/// A tool list whose structure is wrong, with the tool it concerns and the JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdkInputError {
    /// The tool's name when it has a string one, otherwise `#index`; `None` for the list itself.
    pub tool: Option<String>,
    /// JSONPath of the offending value (`$.tools[2].inputSchema`).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for SdkInputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tool {
            Some(tool) => write!(f, "tool {tool} at {}: {}", self.path, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

impl std::error::Error for SdkInputError {}

/// Read a tool list: either a list of SDK tool schemas (`name`, `description`, `parameters`, `output`) or
/// an MCP `tools/list` result (`{ "tools": [{ name, description, inputSchema, outputSchema? }] }`); each
/// entry may use either spelling. Schemas are taken as they are (the renderers degrade what they cannot
/// express); only the list's structure is checked. Takes the value by move so deep schemas are never
/// cloned.
///
/// ```
/// let list = serde_json::json!({ "tools": [{ "name": "ping", "description": "Ping", "inputSchema": { "type": "object" } }] });
/// let tools = dsh_tools::sdk::parse_tool_list(list)?;
/// assert_eq!(tools[0].name, "ping");
/// assert!(dsh_tools::sdk::render_tools_sdk(&tools).contains("ping"));
/// # Ok::<(), dsh_tools::sdk::SdkInputError>(())
/// ```
pub fn parse_tool_list(value: Value) -> Result<Vec<SdkToolSchema>, SdkInputError> {
    let (items, base) = match value {
        Value::Array(items) => (items, "$".to_owned()),
        Value::Object(mut map) => match map.remove("tools") {
            Some(Value::Array(items)) => (items, "$.tools".to_owned()),
            Some(_) => return Err(list_error("$.tools", "must be an array of tools")),
            None => return Err(list_error("$", "must be an array of tools or an object with a \"tools\" array")),
        },
        _ => return Err(list_error("$", "must be an array of tools or an object with a \"tools\" array")),
    };
    let mut tools = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let path = format!("{base}[{index}]");
        let Value::Object(map) = item else {
            return Err(SdkInputError { tool: Some(format!("#{index}")), path, message: "must be an object".to_owned() });
        };
        tools.push(parse_tool(map, index, &path)?);
    }
    Ok(tools)
}

fn list_error(path: &str, message: &str) -> SdkInputError {
    SdkInputError { tool: None, path: path.to_owned(), message: message.to_owned() }
}

fn parse_tool(mut map: Map<String, Value>, index: usize, path: &str) -> Result<SdkToolSchema, SdkInputError> {
    let label = match map.get("name") {
        Some(Value::String(name)) => serde_json::to_string(name).unwrap_or_default(),
        _ => format!("#{index}"),
    };
    let error = |field: &str, message: &str| SdkInputError {
        tool: Some(label.clone()),
        path: format!("{path}.{field}"),
        message: message.to_owned(),
    };
    let name = match map.remove("name") {
        Some(Value::String(name)) => name,
        Some(_) => return Err(error("name", "must be a string")),
        None => return Err(error("name", "is missing")),
    };
    let description = match map.remove("description") {
        Some(Value::String(description)) => Some(description),
        // Upstream renders a description of any other type exactly as an absent one.
        _ => None,
    };
    let parameters = match (map.remove("parameters"), map.remove("inputSchema")) {
        (Some(parameters), None) | (None, Some(parameters)) => parameters,
        (Some(_), Some(_)) => return Err(error("inputSchema", "conflicts with \"parameters\" (give one)")),
        (None, None) => return Err(error("parameters", "is missing (or give \"inputSchema\")")),
    };
    let output = match (map.remove("output"), map.remove("outputSchema")) {
        (Some(output), None) | (None, Some(output)) => Some(output),
        (Some(_), Some(_)) => return Err(error("outputSchema", "conflicts with \"output\" (give one)")),
        (None, None) => None,
    };
    Ok(SdkToolSchema { name, description, parameters, output })
}
