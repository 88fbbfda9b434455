//! A resolved definition as a UI or an SDK reads it (upstream: `get(name, scope)` hands back the whole
//! definition): [`ResolvedTool`] holds the definition `scope` resolved — so a card matches what executed
//! for that agent — with its compiled output schema and its UI presenters, `presentCall` /
//! `presentResult`. A `defineTool`-style ([`Parameters::Dsl`]) definition's presenters
//! validate softly: arguments that fail its parameter schema give `None` (the generic card) instead of an
//! error, because a UI replays logged arguments that may predate the schema.
//!
//! Spec: PRES-001..PRES-003, PRES-006, RUN-044.
//!
//! [`Parameters::Dsl`]: crate::definition::Parameters::Dsl

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::RegisteredTool;
use crate::definition::ToolDefinition;
use crate::views::{ToolCallView, ToolResult, ToolResultView};

/// One resolved definition: read-only access for UIs and SDKs.
#[derive(Clone)]
pub struct ResolvedTool {
    tool: Arc<RegisteredTool>,
}

impl ResolvedTool {
    pub(crate) fn new(tool: Arc<RegisteredTool>) -> Self {
        Self { tool }
    }

    /// The resolved tool's name.
    pub fn name(&self) -> &str {
        &self.tool.schema.name
    }

    /// The definition as registered (its callbacks included).
    pub fn definition(&self) -> &ToolDefinition {
        &self.tool.def
    }

    /// The output schema the registry enforces: the compiled raw JSON Schema (DSL definitions compiled
    /// at registration; raw ones as given), upstream's `output.schema`.
    pub fn output_schema(&self) -> &Value {
        &self.tool.output_schema
    }

    /// Whether the definition carries a `presentCall`.
    pub fn has_present_call(&self) -> bool {
        self.tool.def.present_call.is_some()
    }

    /// Whether the definition carries a `presentResult`.
    pub fn has_present_result(&self) -> bool {
        self.tool.def.present_result.is_some()
    }

    /// The pending-call view for `args`; `None` for the generic card (no presenter, the presenter chose
    /// none, or arguments a DSL definition's schema rejects).
    pub fn present_call(&self, args: &Value) -> Option<ToolCallView> {
        let present = self.tool.def.present_call.as_ref()?;
        self.admits(args).then(|| present(args)).flatten()
    }

    /// The completed-call view for `args` and `result`; `None` keeps the pending title and raw content.
    pub fn present_result(&self, args: &Value, result: &ToolResult) -> Option<ToolResultView> {
        let present = self.tool.def.present_result.as_ref()?;
        self.admits(args).then(|| present(args, result)).flatten()
    }

    /// Soft validation: a raw-schema tool owns its input and sees every argument value.
    fn admits(&self, args: &Value) -> bool {
        self.tool.admits_arguments(args)
    }
}

impl fmt::Debug for ResolvedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedTool")
            .field("name", &self.name())
            .field("present_call", &self.has_present_call())
            .field("present_result", &self.has_present_result())
            .finish()
    }
}
