//! A resolved tool's UI presenters (upstream: a UI's `get(name, scope)` followed by the definition's
//! `presentCall` / `presentResult`). [`ToolPresenters`] holds the definition `scope` resolved, so the card
//! matches what executed for that agent; a `defineTool`-style ([`Parameters::Dsl`]) definition's presenters
//! validate softly: arguments that fail its parameter schema give `None` (the generic card) instead of an
//! error, because a UI replays logged arguments that may predate the schema.
//!
//! Spec: PRES-001..PRES-003, PRES-006.
//!
//! [`Parameters::Dsl`]: crate::definition::Parameters::Dsl

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::RegisteredTool;
use crate::schema::validate::validate_json_schema_value;
use crate::views::{ToolCallView, ToolResult, ToolResultView};

/// The presenters of one resolved definition.
#[derive(Clone)]
pub struct ToolPresenters {
    tool: Arc<RegisteredTool>,
}

impl ToolPresenters {
    pub(crate) fn new(tool: Arc<RegisteredTool>) -> Self {
        Self { tool }
    }

    /// The resolved tool's name.
    pub fn name(&self) -> &str {
        &self.tool.schema.name
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
        !self.tool.validates_args || validate_json_schema_value(&self.tool.schema.parameters, args, "").is_empty()
    }
}

impl fmt::Debug for ToolPresenters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolPresenters")
            .field("name", &self.name())
            .field("present_call", &self.has_present_call())
            .field("present_result", &self.has_present_result())
            .finish()
    }
}
