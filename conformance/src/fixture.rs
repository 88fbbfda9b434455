//! The fixture vocabulary of `setup`: config, tool fixtures and the approval seam (`spec/README.md`
//! § `setup`, § Tool fixtures). The instructions tool bodies and listeners share are `instruction.rs`'s;
//! the listener kinds are `listener.rs`'s.
//!
//! These types round-trip: the harness serializes the scenario's `setup` into `session/open` and the
//! reference server deserializes it with the same types, so every optional field is an `Option` that is
//! skipped when absent (defaults are never filled in) and every alternative keeps its written form.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::instruction::{Instruction, ThrowSpec, True};
use crate::listener::Hooks;
pub use crate::prompt_setup::{
    AssembleDrop, AssembleListener, AssembleReplace, AssembledSectionFixture, PromptSectionFixture, PromptSetup,
};

/// The scenario's `setup`: everything the subject builds when the session opens.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Setup {
    /// `tools.mode` config; absent means `native`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// `tools.maxParallelSubCalls` config (Code Mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel_sub_calls: Option<u64>,
    /// The code runtime mounted, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Language>,
    /// Budgets of the mounted code runtime (`{ computeMs?, maxWallMs?, maxOutputBytes?, maxHeapMb? }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_limits: Option<RuntimeLimits>,
    /// The approval seam; absent means not mounted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// Agent scopes opened at session start, in order; a nested one names a parent declared before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<AgentDecl>>,
    /// Tool fixtures, registered at session start unless `register: false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolFixture>>,
    /// Listeners registered at session start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Hooks>,
    /// Report the implementation's logged warnings as `{ type: log, level: warn, message }` events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<bool>,
    /// Report every entry the implementation appends to an agent's session log as
    /// `{ type: session-append, agent, entryType, data }` events (RUN-058).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_log: Option<bool>,
    /// The system-prompt service's config (`toolOrder`) and fixture sections and assemble listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PromptSetup>,
    /// The dsh-codemode preset plugin (profile `dsh-codemode`), applied after the agents open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codemode: Option<CodemodeSetup>,
}

/// `setup.codemode`: apply the dsh-codemode plugin with the mounted code runtime (`setup.runtime`, which
/// it needs) in the preset scope `preset` (an agent of `setup.agents`), or at the host layer when
/// `preset` is absent; with `executionMode: persistent-in-memory`, on a runtime of the same language and
/// limits that keeps one environment per agent. Its handle is `codemode`: `dispose: codemode` unloads it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CodemodeSetup {
    /// The agent whose scope is the preset scope; absent: mounted at the host layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// The code runtime's execution mode (seed 002); absent: `per-call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_mode: Option<CodemodeExecutionMode>,
}

/// `setup.codemode.executionMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CodemodeExecutionMode {
    /// Every `code_run` starts fresh (the default).
    PerCall,
    /// One resident environment per agent, kept across its `code_run` calls.
    PersistentInMemory,
}

/// An agent scope to open: a bare name (a root scope) or `{ name, parent }`, a scope nested in an agent
/// opened before it (upstream `createScope(ctx, key, { parent })`: it inherits the parent chain's tools,
/// masks, guards and presentation). Keeps its written form so the setup round-trips verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AgentDecl {
    /// A root agent scope.
    Name(String),
    /// An agent scope nested in `parent`.
    Nested(NestedAgent),
}

/// `{ name, parent }`: an agent scope nested in another agent's scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NestedAgent {
    /// The new agent's name.
    pub name: String,
    /// The enclosing agent, opened before this one.
    pub parent: String,
}

impl AgentDecl {
    /// The agent's name.
    pub fn name(&self) -> &str {
        match self {
            AgentDecl::Name(name) => name,
            AgentDecl::Nested(n) => &n.name,
        }
    }

    /// The enclosing agent, if nested.
    pub fn parent(&self) -> Option<&str> {
        match self {
            AgentDecl::Name(_) => None,
            AgentDecl::Nested(n) => Some(&n.parent),
        }
    }
}

/// `tools.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// Native tool calls only (the default).
    Native,
    /// Code Mode only.
    Code,
    /// Both.
    Both,
}

/// `setup.runtimeLimits`: the code runtime's budgets; an absent field keeps the runtime's default. Numbers
/// are kept as written so the setup round-trips verbatim.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuntimeLimits {
    /// Busy-time budget in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_ms: Option<serde_json::Number>,
    /// Wall-clock ceiling in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wall_ms: Option<serde_json::Number>,
    /// The combined output ledger in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<serde_json::Number>,
    /// The program's heap cap in MiB (upstream's worker `maxOldGenerationSizeMb`, default 512).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_heap_mb: Option<serde_json::Number>,
}

/// A code-runtime language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Language {
    /// TypeScript.
    Typescript,
    /// Python.
    Python,
}

impl Language {
    /// The protocol name (`typescript`, `python`).
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Typescript => "typescript",
            Language::Python => "python",
        }
    }
}

/// The answerer behind the approval service: its answer, after running `do`; or, with
/// `answerer: none`, the service mounted with no answerer at all (it answers `unavailable`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Approval {
    /// What the answerer answers; absent only with `answerer: none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<ApprovalAnswer>,
    /// `none`: the approval service is mounted but no answerer is registered (APPR-011).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answerer: Option<NoAnswerer>,
    /// Instructions run before answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#do: Option<Vec<Instruction>>,
}

/// The one value of `setup.approval.answerer`: no answerer is registered behind the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoAnswerer {
    /// `none`.
    None,
}

/// An approval seam's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalAnswer {
    /// `allowed-once`.
    AllowedOnce,
    /// `rejected`.
    Rejected,
    /// `cancelled`.
    Cancelled,
    /// `unavailable`.
    Unavailable,
}

/// One tool fixture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolFixture {
    /// The registered name.
    pub name: String,
    /// The handle steps use; default: `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    /// Register through this agent's scope; default: the global layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Register through the plain plugin context of this name (a plugin fiber of its own, started at
    /// session start, disposed by a `disposePlugin` step); exclusive with `agent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Register at session start; default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub register: Option<bool>,
    /// Default `"fixture tool <name>"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// defineTool parameter DSL (the registry validates arguments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// A raw JSON Schema, registered without defineTool (no argument validation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_parameters: Option<Value>,
    /// The output declaration; absent = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Output>,
    /// `timeoutMs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<TimeoutMs>,
    /// `isConcurrencySafe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Concurrency>,
    /// `finalizeContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalize_content: Option<FinalizeContent>,
    /// `presentCall` (a UI presenter; `presenter.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present_call: Option<crate::presenter::PresentCall>,
    /// `presentResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present_result: Option<crate::presenter::PresentResult>,
    /// The execute function; default `[{ return: null }]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Vec<Instruction>>,
}

impl ToolFixture {
    /// The handle steps use: `handle`, else `name`.
    pub fn handle(&self) -> &str {
        self.handle.as_deref().unwrap_or(&self.name)
    }

    /// Whether setup registers it.
    pub fn registers_at_open(&self) -> bool {
        self.register.unwrap_or(true)
    }
}

/// A tool's output declaration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Output {
    /// Value DSL (for `parameters` tools) or raw JSON Schema (for `rawParameters` tools).
    pub schema: Value,
    /// How the value is rendered into content.
    pub render: Render,
    /// `presentationMeta`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presentation_meta: Option<PresentationMeta>,
}

/// `output.render`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Render {
    /// `text`: the value as a string (JSON text for non-strings).
    Text,
    /// `json`: compact JSON of the value.
    Json,
    /// `{ content: [parts] }`: fixed content parts.
    Content(Vec<Value>),
    /// `{ throw: message }`.
    Throw(ThrowSpec),
    /// `{ invalid: true }`: returns something that is not content.
    Invalid(True),
    /// `{ missing: true }`: an output object without a render function.
    Missing(True),
    /// `{ fromArguments: true }`: one text part, the compact JSON of the argument snapshot render receives
    /// (OUT-005: render is called with the call's arguments, not the value only).
    FromArguments(True),
}

/// `output.presentationMeta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PresentationMeta {
    /// `{ value: V }`.
    Value(Value),
    /// `{ fromArguments: true }`.
    FromArguments(True),
    /// `{ fromValue: true }`: the value `presentationMeta` is given (the call's final value, after any
    /// post-execute replacement).
    FromValue(True),
    /// `{ throw: message }`.
    Throw(ThrowSpec),
}

/// `timeoutMs`: any JSON number, or a non-finite number spelled as a string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TimeoutMs {
    /// A JSON number.
    Number(serde_json::Number),
    /// `"Infinity"`, `"-Infinity"` or `"NaN"`.
    NonFinite(NonFinite),
}

/// A non-finite number spelled as a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NonFinite {
    /// `"Infinity"`.
    #[serde(rename = "Infinity")]
    Infinity,
    /// `"-Infinity"`.
    #[serde(rename = "-Infinity")]
    NegInfinity,
    /// `"NaN"`.
    #[serde(rename = "NaN")]
    NaN,
}

/// `concurrency` (`isConcurrencySafe`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Concurrency {
    /// `true` / `false`.
    Bool(bool),
    /// `throws`: the classifier throws.
    Throws(ThrowsWord),
    /// `{ returns: V }`: returns a non-boolean.
    Returns(ConcurrencyReturns),
    /// `{ argument: path, equals: V }`: safe when the argument at `path` equals `V`.
    Argument(ConcurrencyArgument),
}

/// The word `throws`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ThrowsWord {
    /// `throws`.
    Throws,
}

/// `{ returns: V }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConcurrencyReturns {
    /// The (non-boolean) value returned.
    pub returns: Value,
}

/// `{ argument: path, equals: V }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConcurrencyArgument {
    /// Dotted path into the arguments.
    pub argument: String,
    /// The value that makes the call concurrency-safe.
    pub equals: Value,
}

/// `finalizeContent`: `do` instructions, then exactly one action (the schema enforces "exactly one";
/// [`FinalizeContent::action`] reads it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FinalizeContent {
    /// Instructions run first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#do: Option<Vec<Instruction>>,
    /// `{ replace: [parts] }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<Vec<Value>>,
    /// `{ appendText: s }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append_text: Option<String>,
    /// `{ keep: true }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<True>,
    /// `{ throw: message }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throw: Option<ThrowSpec>,
}

/// The action of a [`FinalizeContent`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FinalizeAction<'a> {
    /// Replace the content with these parts.
    Replace(&'a [Value]),
    /// Append a text part.
    AppendText(&'a str),
    /// Keep the content.
    Keep,
    /// Throw.
    Throw(&'a ThrowSpec),
}

impl FinalizeContent {
    /// The one action; `None` when zero or several are given (the schema rejects both).
    pub fn action(&self) -> Option<FinalizeAction<'_>> {
        let mut found = Vec::new();
        if let Some(parts) = &self.replace {
            found.push(FinalizeAction::Replace(parts));
        }
        if let Some(text) = &self.append_text {
            found.push(FinalizeAction::AppendText(text));
        }
        if self.keep.is_some() {
            found.push(FinalizeAction::Keep);
        }
        if let Some(t) = &self.throw {
            found.push(FinalizeAction::Throw(t));
        }
        if found.len() == 1 { found.pop() } else { None }
    }
}
