//! Importing an MCP server's tools: a `tools/list` result (JSON) becomes registrable
//! [`ToolDefinition`]s whose bodies call the server through a caller-supplied [`McpCaller`], with every
//! schema lowered into the registry's subset ([`crate::schema::lower`]) and a report of what was dropped
//! or changed per tool. The crate speaks no MCP transport itself: the caller wires a client (for
//! example `rmcp`, see `examples/mcp_code_mode.rs`) into the caller closure.
//!
//! What each MCP tool field becomes:
//! - `name` → the definition name; `description` → its description (else `title`, else
//!   `annotations.title`, else empty — reported);
//! - `inputSchema` → raw parameters, lowered (a failure names the tool);
//! - `outputSchema` → the output declaration, lowered; the canonical value is the call's
//!   `structuredContent` and the content is its JSON text (the MCP fallback block). Without an
//!   `outputSchema` the value is the call's text content joined by newlines (a string), the content
//!   that text (reported);
//! - `annotations.readOnlyHint: true` → concurrency-safe (`ExecutionMode::Parallel`); the other hints,
//!   `title`, `icons`, `_meta` and unknown fields are dropped (reported);
//! - a call result with `isError: true` fails with its text content as the message.
//!
//! Non-text content blocks (images, audio, resources) of a call result are not carried: the result
//! content is rendered from the canonical value.
//!
//! Arguments are checked against the tool's full `inputSchema` (not the lowered one the model sees) before
//! the caller runs ([`crate::schema::arguments`]): a call with a missing required field or a value the
//! schema's `minimum`, `pattern`, `format`, … rejects is an `INVALID_ARGS` result naming the path, and
//! the server never sees it. A schema whose constraints cannot be enforced (an unknown `format`, an
//! invalid `pattern`) fails the import naming the tool and the reason; [`McpImportOptions`] turns the
//! check off.
//!
//! Spec: ARG-016 (the registry still checks nothing: the check is the imported tool's own).

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::callback::BoxFuture;
use crate::definition::{OutputDeclaration, Parameters, ToolDefinition};
use crate::error::ToolFailure;
use crate::execution::ToolRunContext;
use crate::schema::arguments::ArgumentCheck;
use crate::schema::lower::{LowerError, LoweringAction, LoweringChange, lower_json_schema};

/// Calls one tool on the MCP server: `(tool name, arguments, the call's context)` → the `tools/call`
/// result as JSON (`{ content, structuredContent?, isError? }`), or a transport failure.
pub type McpCaller = Arc<dyn Fn(String, Value, ToolRunContext) -> BoxFuture<'static, Result<Value, ToolFailure>> + Send + Sync>;

/// The imported definitions and, per tool, what the import changed.
#[derive(Debug)]
pub struct McpImport {
    /// One definition per listed tool, in list order, ready for `ToolRuntime::register`.
    pub definitions: Vec<ToolDefinition>,
    /// One report per listed tool, in list order.
    pub reports: Vec<McpToolReport>,
}

/// How [`import_tools_list_with`] imports.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct McpImportOptions {
    /// Check each call's arguments against the tool's full `inputSchema` before calling the server
    /// (default `true`). With `false` the server alone checks them.
    pub check_arguments: bool,
}

impl Default for McpImportOptions {
    fn default() -> Self {
        Self { check_arguments: true }
    }
}

impl McpImportOptions {
    /// The same options with the argument check on or off.
    pub fn check_arguments(mut self, check: bool) -> Self {
        self.check_arguments = check;
        self
    }
}

/// What the import of one tool dropped or changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpToolReport {
    /// The tool's name.
    pub tool: String,
    /// Each change: `path` is rooted at the tool field (`inputSchema`, `outputSchema`, `annotations`,
    /// the tool itself as `$`), in the lowering's `$.properties.x` style below it.
    pub changes: Vec<LoweringChange>,
}

/// A `tools/list` result that could not be imported, naming the tool (when it has a name) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpImportError {
    /// The tool's position in the list.
    pub index: usize,
    /// The tool's name, when it has one.
    pub tool: Option<String>,
    /// What is wrong.
    pub reason: String,
    /// The schema lowering failure behind it, if that was the cause.
    pub lowering: Option<Box<LowerError>>,
}

impl fmt::Display for McpImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tool {
            Some(tool) => write!(f, "MCP tool \"{tool}\" (tools[{}]): {}", self.index, self.reason),
            None => write!(f, "MCP tools[{}]: {}", self.index, self.reason),
        }
    }
}

impl std::error::Error for McpImportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.lowering.as_deref().map(|e| e as _)
    }
}

const KNOWN: [&str; 6] = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"];

/// Import a `tools/list` result (`{ "tools": [...] }`, or the bare array) into definitions calling
/// `caller`.
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools::mcp::{McpCaller, import_tools_list};
/// use serde_json::json;
///
/// let caller: McpCaller = Arc::new(|_name, _args, _ctx| Box::pin(async { Ok(json!({"content": [{"type": "text", "text": "4"}]})) }));
/// let list = json!({"tools": [{
///     "name": "add",
///     "description": "Add two integers",
///     "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
///         "properties": {"a": {"type": "integer", "format": "int64"}, "b": {"type": "integer", "minimum": 0}}},
///     "annotations": {"readOnlyHint": true}
/// }]});
/// let import = import_tools_list(&list, caller)?;
/// assert_eq!(import.definitions[0].name, "add");
/// assert!(import.definitions[0].is_concurrency_safe.is_some());
/// let dropped: Vec<String> = import.reports[0].changes.iter().map(|c| format!("{}.{}", c.path, c.keyword)).collect();
/// assert!(dropped.contains(&"inputSchema.$.properties.a.format".to_owned()), "{dropped:?}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn import_tools_list(list: &Value, caller: McpCaller) -> Result<McpImport, McpImportError> {
    import_tools_list_with(list, caller, &McpImportOptions::default())
}

/// [`import_tools_list`] with options (say, without the argument check).
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools::mcp::{McpCaller, McpImportOptions, import_tools_list, import_tools_list_with};
/// use serde_json::json;
///
/// let caller: McpCaller = Arc::new(|_, _, _| Box::pin(async { Ok(json!({ "content": [] })) }));
/// // A format no checker knows cannot be enforced: the import says so, naming the tool...
/// let list = json!([{ "name": "zip", "inputSchema": { "type": "object",
///     "properties": { "code": { "type": "string", "format": "postcode" } } } }]);
/// let error = import_tools_list(&list, Arc::clone(&caller)).unwrap_err();
/// assert!(error.to_string().starts_with("MCP tool \"zip\" (tools[0]): inputSchema: cannot check arguments"));
/// // ...unless the server is left to check its own arguments.
/// let options = McpImportOptions::default().check_arguments(false);
/// assert_eq!(import_tools_list_with(&list, caller, &options)?.definitions.len(), 1);
/// # Ok::<(), dsh_tools::mcp::McpImportError>(())
/// ```
pub fn import_tools_list_with(list: &Value, caller: McpCaller, options: &McpImportOptions) -> Result<McpImport, McpImportError> {
    let tools = match list {
        Value::Array(tools) => tools,
        Value::Object(map) => match map.get("tools") {
            Some(Value::Array(tools)) => tools,
            _ => return Err(McpImportError { index: 0, tool: None, reason: "a tools/list result needs a `tools` array".into(), lowering: None }),
        },
        _ => return Err(McpImportError { index: 0, tool: None, reason: "a tools/list result must be an object or an array".into(), lowering: None }),
    };
    let mut import = McpImport { definitions: Vec::with_capacity(tools.len()), reports: Vec::with_capacity(tools.len()) };
    for (index, tool) in tools.iter().enumerate() {
        let (definition, report) = import_tool(index, tool, &caller, options)?;
        import.definitions.push(definition);
        import.reports.push(report);
    }
    Ok(import)
}

fn import_tool(
    index: usize,
    tool: &Value,
    caller: &McpCaller,
    options: &McpImportOptions,
) -> Result<(ToolDefinition, McpToolReport), McpImportError> {
    let fail = |tool: Option<&str>, reason: String, lowering: Option<LowerError>| McpImportError {
        index,
        tool: tool.map(str::to_owned),
        reason,
        lowering: lowering.map(Box::new),
    };
    let Value::Object(map) = tool else { return Err(fail(None, "a tool must be an object".into(), None)) };
    let Some(Value::String(name)) = map.get("name") else { return Err(fail(None, "a tool needs a string `name`".into(), None)) };
    let mut changes = Vec::new();
    let mut note = |path: &str, keyword: &str, action: LoweringAction| changes.push(LoweringChange { path: path.into(), keyword: keyword.into(), action });
    for key in map.keys().filter(|k| !KNOWN.contains(&k.as_str())) {
        note("$", key, LoweringAction::Dropped);
    }
    let annotations = map.get("annotations").and_then(Value::as_object);
    let description = match (map.get("description"), map.get("title"), annotations.and_then(|a| a.get("title"))) {
        (Some(Value::String(d)), _, _) => d.clone(),
        (_, Some(Value::String(t)), _) | (_, _, Some(Value::String(t))) => {
            note("$", "description", LoweringAction::Rewritten { detail: "missing: the title stands in".into() });
            t.clone()
        }
        _ => {
            note("$", "description", LoweringAction::Rewritten { detail: "missing: empty".into() });
            String::new()
        }
    };
    let lowered = |field: &str, schema: &Value| {
        lower_json_schema(schema).map_err(|e| fail(Some(name), format!("{field}: {e}"), Some(e)))
    };
    let default_input = json!({"type": "object"});
    let input_schema = map.get("inputSchema").unwrap_or(&default_input);
    let input = lowered("inputSchema", input_schema)?;
    if input.schema.get("type") != Some(&json!("object")) {
        return Err(fail(Some(name), "inputSchema must describe an object".into(), None));
    }
    let check = match options.check_arguments {
        false => None,
        true => Some(Arc::new(ArgumentCheck::new(input_schema).map_err(|e| fail(Some(name), format!("inputSchema: {e}"), None))?)),
    };
    let output = map.get("outputSchema").map(|schema| lowered("outputSchema", schema)).transpose()?;
    let mut changes: Vec<LoweringChange> = changes;
    let prefixed = |field: &'static str, list: Vec<LoweringChange>| list.into_iter().map(move |c| LoweringChange { path: format!("{field}.{}", c.path), ..c });
    changes.extend(prefixed("inputSchema", input.changes));
    let structured = output.is_some();
    let output_schema = match output {
        Some(output) => {
            changes.extend(prefixed("outputSchema", output.changes));
            output.schema
        }
        None => {
            changes.push(LoweringChange {
                path: "$".into(),
                keyword: "outputSchema".into(),
                action: LoweringAction::Rewritten { detail: "absent: the value is the call's text content (a string)".into() },
            });
            json!({"type": "string"})
        }
    };
    let read_only = annotations.and_then(|a| a.get("readOnlyHint")) == Some(&Value::Bool(true));
    for key in annotations.into_iter().flat_map(Map::keys) {
        if key == "readOnlyHint" && read_only {
            let detail = "readOnlyHint: true → concurrency-safe (parallel)".to_owned();
            changes.push(LoweringChange { path: "annotations".into(), keyword: key.clone(), action: LoweringAction::Rewritten { detail } });
        } else {
            changes.push(LoweringChange { path: "annotations".into(), keyword: key.clone(), action: LoweringAction::Dropped });
        }
    }
    let (caller, tool_name) = (Arc::clone(caller), name.clone());
    let render: crate::definition::RenderFn = Arc::new(move |_, value| {
        let text = match value {
            Value::String(text) if !structured => text.clone(),
            other => serde_json::to_string(other).map_err(|e| e.to_string())?,
        };
        Ok(vec![json!({"type": "text", "text": text})])
    });
    let mut definition = ToolDefinition::new(
        name.clone(),
        description,
        Parameters::Raw(input.schema),
        OutputDeclaration { schema: output_schema, render, presentation_meta: None },
        Arc::new(move |arguments, ctx| {
            let (caller, name) = (Arc::clone(&caller), tool_name.clone());
            let checked = check.as_ref().map_or(Ok(()), |check| check.check(&arguments));
            Box::pin(async move {
                checked?;
                let result = caller(name.clone(), (*arguments).clone(), ctx).await?;
                call_value(&name, result, structured)
            })
        }),
    );
    if read_only {
        definition.is_concurrency_safe = Some(Arc::new(|_| Ok(true)));
    }
    Ok((definition, McpToolReport { tool: name.clone(), changes }))
}

/// The canonical value of a `tools/call` result, or its failure.
fn call_value(tool: &str, result: Value, structured: bool) -> Result<Value, ToolFailure> {
    let text = || -> String {
        let blocks = result.get("content").and_then(Value::as_array).into_iter().flatten();
        blocks.filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
    };
    if result.get("isError") == Some(&Value::Bool(true)) {
        let message = text();
        return Err(ToolFailure::message(if message.is_empty() { format!("MCP tool \"{tool}\" failed") } else { message }));
    }
    if structured {
        return match result.get("structuredContent") {
            Some(value) => Ok(value.clone()),
            None => Err(ToolFailure::message(format!("MCP tool \"{tool}\" declares an outputSchema but returned no structuredContent"))),
        };
    }
    Ok(Value::String(text()))
}
