//! `setup.prompt`: the system-prompt service's config row (`toolOrder`) and what a scenario contributes to
//! the prompt service at session start — static sections (global or per agent) and
//! `system-prompt/assemble` listeners that filter or replace what the assembly returned
//! (`spec/README.md` § Setup).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `setup.prompt`: the system-prompt service's config row.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PromptSetup {
    /// The explicit model-facing tool order: names plus one `<unlisted-tools>` rest entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_order: Option<Vec<String>>,
    /// Sections contributed at session start (after the agents are opened), in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<PromptSectionFixture>>,
    /// `system-prompt/assemble` listeners registered at session start (after the sections), in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assemble: Option<Vec<AssembleListener>>,
}

/// `setup.prompt.sections[]`: a static section registered through the global context or an agent's scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptSectionFixture {
    /// The section name (unique within its layer; a scoped one shadows a same-named global one).
    pub name: String,
    /// Its order (sections are assembled in ascending order).
    pub order: f64,
    /// Its text.
    pub text: String,
    /// Register through this agent's scope; absent: the global layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// `setup.prompt.assemble[]`: a `system-prompt/assemble` listener that awaits the rest of the waterfall,
/// then drops the named sections and tools from what it returned, then replaces the lists it names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AssembleListener {
    /// Register through this agent's scope (it then sees only that scope's and nested scopes'
    /// assemblies); absent: the global context (every assembly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Names to remove.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<AssembleDrop>,
    /// Lists to replace wholesale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<AssembleReplace>,
}

/// What an [`AssembleListener`] removes, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AssembleDrop {
    /// Section names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<String>>,
    /// Tool names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// What an [`AssembleListener`] puts in place of the assembled lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AssembleReplace {
    /// The sections, each `{ name, text }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<AssembledSectionFixture>>,
    /// The tools, each `{ name, description, parameters }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Value>>,
}

/// A section as an assembly carries it: `{ name, text }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssembledSectionFixture {
    /// The section name.
    pub name: String,
    /// Its text.
    pub text: String,
}
