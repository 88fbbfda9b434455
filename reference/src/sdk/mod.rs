//! Code Mode SDK text: the `tools:sdk` prompt section in its TypeScript and Python flavors, and the
//! schema → type codegens behind it. Byte-identical to upstream `renderToolsSdk` /
//! `renderToolsSdkPy` / `jsonSchemaToTs` / `jsonSchemaToPy` for every input.
//!
//! Both renderers are total: unsupported schema constructs degrade (`unknown` / `Any`), nothing
//! panics, and schemas of any depth are walked with explicit stacks. Output is deterministic: tools
//! are ordered by name (UTF-16 code unit order, stable for equal names).
//!
//! Spec: SDK-006 (order), SDK-024 (total).

mod input;
mod js;
mod names;
mod py;
mod subset;
mod ts;
mod unicode;
mod unicode_tables;
mod usage;

use serde_json::Value;

pub use input::{SdkInputError, parse_tool_list};

/// The program languages with an SDK renderer, in upstream's table order (`SDK_RENDERERS`).
pub const SDK_LANGUAGES: &[&str] = &["typescript", "python"];

/// The SDK renderer of a program language (upstream `SDK_RENDERERS[language]`).
pub fn renderer(language: &str) -> Option<fn(&[SdkToolSchema]) -> String> {
    match language {
        "typescript" => Some(render_tools_sdk),
        "python" => Some(render_tools_sdk_py),
        _ => None,
    }
}
pub use py::{json_schema_to_py, render_tools_sdk_py, render_tools_sdk_py_with};
pub(crate) use py::render_tools_sdk_py_views;
pub use ts::{json_schema_to_ts, render_tools_sdk, render_tools_sdk_with};
pub(crate) use ts::{TsMembers, assemble_tools_sdk};
pub use usage::{ProgramState, SdkUsage};

/// The SDK renderer of a program language for the transport a [`SdkUsage`] describes ([`renderer`] is
/// this with [`SdkUsage::RUN_CODE`]).
pub fn renderer_with(language: &str) -> Option<fn(&SdkUsage<'_>, &[SdkToolSchema]) -> String> {
    match language {
        "typescript" => Some(render_tools_sdk_with),
        "python" => Some(render_tools_sdk_py_with),
        _ => None,
    }
}

/// One tool as the SDK renderers see it: the model-facing schema plus the canonical output schema.
#[derive(Debug, Clone, PartialEq)]
pub struct SdkToolSchema {
    /// Tool name; any string (exotic names are quoted / routed to subscript access).
    pub name: String,
    /// Tool description; absent and empty render no doc line.
    pub description: Option<String>,
    /// JSON Schema of the arguments (any value: outside the subset it degrades).
    pub parameters: Value,
    /// JSON Schema of the canonical output; absent renders as `unknown` (TypeScript) / `Any` (Python).
    pub output: Option<Value>,
}

/// A borrowed [`SdkToolSchema`]: what a renderer reads of one tool.
#[derive(Clone, Copy)]
pub(crate) struct SdkToolView<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: Option<&'a str>,
    pub(crate) parameters: &'a Value,
    pub(crate) output: Option<&'a Value>,
}

impl<'a> SdkToolView<'a> {
    /// The view of `schema`.
    pub(crate) fn of(schema: &'a SdkToolSchema) -> Self {
        Self { name: &schema.name, description: schema.description.as_deref(), parameters: &schema.parameters, output: schema.output.as_ref() }
    }
}

/// The tools in UTF-16 name order; equal names keep their input order.
fn sort_by_name(schemas: &[SdkToolSchema]) -> Vec<&SdkToolSchema> {
    let mut sorted: Vec<&SdkToolSchema> = schemas.iter().collect();
    sorted.sort_by(|a, b| js::cmp_utf16(&a.name, &b.name));
    sorted
}
