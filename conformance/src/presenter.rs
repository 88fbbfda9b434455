//! The presenter vocabulary of the scenario format (`spec/README.md` § Presenters): a tool fixture's
//! `presentCall` / `presentResult` (what the UI presenter returns) and the `present` step, which asks a
//! subject for the views of the definition a scope resolves (`tools/present`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::instruction::{True, present};

/// `presentCall`: exactly one of `{ view: V }` (V, `null`: undefined) or `{ fromArguments: true }`
/// (`{ card: generic, title: <tool name>, rawInput: args }`). The schema enforces "exactly one".
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PresentCall {
    /// The view returned verbatim (`null`: the presenter returns undefined).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub view: Option<Value>,
    /// The generic card over the call's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_arguments: Option<True>,
}

/// `presentResult`: exactly one of `{ view: V }`, `{ echo: true }` (`{ card: generic, title: 'failed' |
/// 'done', content: result.content }`) or `{ fromMeta: true }` (`result.meta` as the view, undefined
/// when absent).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PresentResult {
    /// The view returned verbatim (`null`: undefined).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub view: Option<Value>,
    /// The generic card over the result's content and failure state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo: Option<True>,
    /// The result's `meta`, narrowed back into a view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_meta: Option<True>,
}

/// `present: { name, arguments, agent?, result? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PresentStep {
    /// The tool name, resolved as `agent` sees it.
    pub name: String,
    /// The (logged) call arguments.
    pub arguments: Value,
    /// The agent scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The completed outcome `{ content, isError, meta? }`; when given, `presentResult` is asked too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}
