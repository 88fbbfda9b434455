//! What a tool author hands the registry: [`ToolDefinition`] (schema, mandatory output declaration, body,
//! optional classifier, content finalizer and UI presenters) and the model-facing projection [`ToolSchema`].
//!
//! Spec: REG-006, REG-009, REG-016, OUT-005..OUT-008, REG-026, PRES-001..PRES-003.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::error::ToolFailure;
use crate::execution::{ToolExecution, ToolRunContext};
use crate::result::ToolExecutionResult;
use crate::views::{ToolCallView, ToolResult, ToolResultView};

pub use crate::callback::BoxFuture;

/// A tool body: receives the frozen arguments and the run context, resolves to the canonical value.
pub type ToolBody = Arc<dyn Fn(Arc<Value>, ToolRunContext) -> BoxFuture<'static, Result<Value, ToolFailure>> + Send + Sync>;

/// `output.render(args, value)`: the model-facing content blocks for a canonical value.
pub type RenderFn = Arc<dyn Fn(&Value, &Value) -> Result<Vec<Value>, String> + Send + Sync>;

/// `output.presentationMeta(args, value)`: durable presentation metadata for a canonical value.
pub type PresentationMetaFn = Arc<dyn Fn(&Value, &Value) -> Result<Value, String> + Send + Sync>;

/// `isConcurrencySafe(args)`: only `Ok(true)` classifies a call as parallel.
pub type ConcurrencyClassifier = Arc<dyn Fn(&Value) -> Result<bool, String> + Send + Sync>;

/// `finalizeContent(exec, result)`: may replace only the final content (`Ok(None)` keeps it). Snapshotted
/// when a call starts and applied once to every normalized result; a failure becomes the result.
pub type FinalizeContentFn =
    Arc<dyn Fn(&ToolExecution, &ToolExecutionResult) -> Result<Option<Vec<Value>>, ToolFailure> + Send + Sync>;

/// `presentCall(args)`: how the PENDING call renders in a UI, or `None` for the generic card (title = the
/// tool name, the raw arguments as input). Pure: a UI calls it live and on log replay, with arguments
/// that may predate the current schema. For [`Parameters::Dsl`] tools the runtime validates softly first
/// ([`ResolvedTool::present_call`](crate::ResolvedTool::present_call), from [`ToolRuntime::resolve`](crate::ToolRuntime::resolve)): arguments that fail are `None`.
pub type PresentCallFn = Arc<dyn Fn(&Value) -> Option<ToolCallView> + Send + Sync>;

/// `presentResult(args, result)`: how the COMPLETED call renders, from the same arguments and the durable
/// result (content, failure state, `presentationMeta`); `None` keeps the pending title and the raw
/// content. Pure, and validated softly like [`PresentCallFn`].
pub type PresentResultFn = Arc<dyn Fn(&Value, &ToolResult) -> Option<ToolResultView> + Send + Sync>;

/// How a definition declares its parameters.
#[derive(Clone, Debug)]
pub enum Parameters {
    /// A `defineTool` parameter map (`{ name: { type, required?, ... } }`): compiled at registration, and
    /// every call's arguments are validated against it immediately before the body (`INVALID_ARGS`).
    Dsl(Value),
    /// A raw JSON Schema, presented as-is; the tool owns its input validation.
    Raw(Value),
}

/// The mandatory output declaration.
#[derive(Clone)]
pub struct OutputDeclaration {
    /// For [`Parameters::Dsl`] tools a DSL value spec (compiled at registration, like `defineTool`); for
    /// [`Parameters::Raw`] tools a raw JSON Schema in the enforced subset.
    pub schema: Value,
    /// Content projection.
    pub render: RenderFn,
    /// Optional metadata projection (skipped for nested calls, i.e. those with a `parent`).
    pub presentation_meta: Option<PresentationMetaFn>,
}

impl fmt::Debug for OutputDeclaration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputDeclaration")
            .field("schema", &"..")
            .field("presentation_meta", &self.presentation_meta.is_some())
            .finish_non_exhaustive()
    }
}

/// A tool definition as registered.
#[derive(Clone)]
pub struct ToolDefinition {
    /// Unique name within a layer.
    pub name: String,
    /// Model-facing description.
    pub description: String,
    /// Parameter declaration.
    pub parameters: Parameters,
    /// Output declaration; registration rejects `None`.
    pub output: Option<OutputDeclaration>,
    /// Declarative timeout in milliseconds (set it with [`with_timeout`](Self::with_timeout)); must be
    /// positive and finite when present. The pipeline itself does not enforce it: a `tools/execute`
    /// wrapper that reads it does.
    pub timeout_ms: Option<f64>,
    /// Optional per-call concurrency classifier.
    pub is_concurrency_safe: Option<ConcurrencyClassifier>,
    /// Optional final content transform.
    pub finalize_content: Option<FinalizeContentFn>,
    /// Optional pending-call presenter (UI only; never model-visible, never called by the pipeline).
    pub present_call: Option<PresentCallFn>,
    /// Optional completed-call presenter.
    pub present_result: Option<PresentResultFn>,
    /// The body.
    pub execute: ToolBody,
}

impl ToolDefinition {
    /// A definition with the required parts; set the optional fields directly.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Parameters,
        output: OutputDeclaration,
        execute: ToolBody,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            output: Some(output),
            timeout_ms: None,
            is_concurrency_safe: None,
            finalize_content: None,
            present_call: None,
            present_result: None,
            execute,
        }
    }
}

impl ToolDefinition {
    /// The same definition with a declared timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout_ms = Some(timeout.as_secs_f64() * 1000.0);
        self
    }

    /// The declared timeout, if it is a valid duration.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout_ms.and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
    }

    /// The same definition with a concurrency classifier that always answers `safe`: its calls may
    /// overlap other concurrency-safe calls. Without a classifier every call runs alone.
    pub fn concurrency_safe(mut self, safe: bool) -> Self {
        self.is_concurrency_safe = Some(Arc::new(move |_| Ok(safe)));
        self
    }
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("output", &self.output)
            .field("timeout_ms", &self.timeout_ms)
            .field("present_call", &self.present_call.is_some())
            .field("present_result", &self.present_result.is_some())
            .finish_non_exhaustive()
    }
}

/// The model-facing projection of a visible tool: `{ name, description, parameters }` (no output, no
/// callbacks). `parameters` is the compiled JSON Schema for DSL tools, shared, never re-cloned.
#[derive(Clone, Debug)]
pub struct ToolSchema {
    /// Tool name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Parameter JSON Schema.
    pub parameters: Arc<Value>,
}

impl ToolSchema {
    /// Upstream's JSON shape, keys in upstream order.
    pub fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        map.insert("name".into(), Value::String(self.name.clone()));
        map.insert("description".into(), Value::String(self.description.clone()));
        map.insert("parameters".into(), crate::value::deep_clone(&self.parameters));
        Value::Object(map)
    }
}
