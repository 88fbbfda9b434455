//! The scenario model (`spec/README.md` § Scenario files, § Steps, § Results and matchers): a scenario
//! file (one scenario or a family), its steps with their one action key and `expect`, and calls.
//!
//! Unknown fields are errors everywhere. Steps are single-action mappings with an optional `expect`;
//! they are (de)serialized through a map because serde's `flatten` cannot deny unknown fields.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::fixture::{AgentDecl, Setup};
use crate::instruction::present;
use crate::listener::Listener;

/// The default profile of scenarios and rules.
pub const DEFAULT_PROFILE: &str = "dsh-tools-0.1";

/// A scenario file: one scenario, or a family (`scenarios:`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ScenarioFile {
    /// A mapping with `scenarios:`.
    Family(Family),
    /// A mapping with `id`.
    Single(Box<Scenario>),
}

impl ScenarioFile {
    /// The scenarios of the file, in order.
    pub fn into_scenarios(self) -> Vec<Scenario> {
        match self {
            ScenarioFile::Family(f) => f.scenarios,
            ScenarioFile::Single(s) => vec![*s],
        }
    }
}

/// A small family of scenarios in one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Family {
    /// What the family covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The scenarios, in order.
    pub scenarios: Vec<Scenario>,
}

/// Requirement level of a rule or scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Level {
    /// MUST.
    Must,
    /// SHOULD.
    Should,
    /// MAY.
    May,
}

impl Level {
    /// `must`, `should` or `may`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "must",
            Level::Should => "should",
            Level::May => "may",
        }
    }
}

/// What a scenario whose setup must be refused expects of the refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RejectsSetup {
    /// Matched against the setup-rejected error's message.
    pub message: Value,
}

/// One scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scenario {
    /// Unique across the suite, immutable.
    pub id: String,
    /// The rules it checks (at least one).
    pub rules: Vec<String>,
    /// Requirement level.
    pub level: Level,
    /// Profile; default [`DEFAULT_PROFILE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Extra features, beyond those inferred from the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires: Option<Vec<String>>,
    /// What it checks, in one sentence.
    pub description: String,
    /// A scheduling hint (`heavy: true`): the trial moves large values, so the runner starts it early. It
    /// never changes what is checked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub heavy: bool,
    /// What the session builds when it opens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Setup>,
    /// `rejectsSetup: { message }`: the implementation must refuse the setup — `session/open` answers the
    /// setup-rejected error (PROTOCOL.md), whose message `message` matches (a matcher: adapters wrap the
    /// implementation's own text, so scenarios use `$regex` on it). No steps follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejects_setup: Option<RejectsSetup>,
    /// The steps, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
}

impl Scenario {
    /// The profile, defaulted.
    pub fn profile(&self) -> &str {
        self.profile.as_deref().unwrap_or(DEFAULT_PROFILE)
    }

    /// The setup, defaulted to an empty one.
    pub fn setup_or_default(&self) -> Setup {
        self.setup.clone().unwrap_or_default()
    }
}

/// One step: an action and an optional `expect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Map<String, Value>", into = "Map<String, Value>")]
pub struct Step {
    /// The one action key and its value.
    pub action: Action,
    /// What the step must produce.
    pub expect: Option<Expect>,
}

impl TryFrom<Map<String, Value>> for Step {
    type Error = String;

    fn try_from(mut map: Map<String, Value>) -> Result<Self, String> {
        let expect = match map.shift_remove("expect") {
            None => None,
            Some(v) => Some(serde_json::from_value(v).map_err(|e| format!("expect: {e}"))?),
        };
        if map.len() != 1 {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            return Err(format!("a step needs exactly one action key besides `expect`, found {keys:?}"));
        }
        let action = serde_json::from_value(Value::Object(map)).map_err(|e| e.to_string())?;
        Ok(Step { action, expect })
    }
}

impl From<Step> for Map<String, Value> {
    fn from(step: Step) -> Self {
        let mut map = match serde_json::to_value(step.action) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if let Some(expect) = step.expect {
            map.insert("expect".into(), serde_json::to_value(expect).unwrap_or(Value::Null));
        }
        map
    }
}

/// A step's action: a single-key mapping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Register a fixture by handle.
    Register(RegisterStep),
    /// Dispose a registration, hook, mask or presentation by handle.
    Dispose(String),
    /// Register one listener.
    AddHook(AddHook),
    /// `tools.restrict` through an agent's scope.
    Restrict(Restrict),
    /// `tools.presentAs`.
    PresentAs(PresentAs),
    /// Open an agent scope (a root one, or `{ name, parent }` nested in an open agent).
    OpenAgent(AgentDecl),
    /// Dispose an agent scope with all it registered.
    DropAgent(String),
    /// Dispose a fixture plugin (its fiber) with all it registered (REG-014).
    DisposePlugin(String),
    /// Dispose the registry itself (`disposeRegistry: true`; upstream: the `ToolRuntime` plugin's fiber),
    /// with everything registered through it (REG-027).
    DisposeRegistry(bool),
    /// Unmount the approval seam mounted by `setup.approval` (`unmountApproval: true`; upstream: dispose
    /// the ApprovalService fiber) (APPR-010).
    UnmountApproval(bool),
    /// `tools.get`.
    Get(Get),
    /// `tools.schemas`.
    Schemas(AgentOnly),
    /// `tools.executionMode`.
    ExecutionMode(ExecutionModeStep),
    /// A resolved definition's UI presenters (`tools/present`).
    Present(crate::presenter::PresentStep),
    /// A resolved definition's output schema and optional members (`tools/definition`).
    Definition(Get),
    /// Start a call and await its result.
    Execute(Call),
    /// Start a call without waiting.
    Start(Call),
    /// Await the result of a started call.
    Await(String),
    /// Abort the caller's signal of a call.
    Abort(AbortStep),
    /// Open a gate (idempotent).
    OpenGate(String),
    /// Wait until a `mark` event with this label has been emitted (at once if it already was).
    WaitFor(String),
    /// Pause the harness for this many milliseconds (nothing is sent). Only for a check that some time
    /// passed while a call is held (e.g. awaiting a binding is not busy time, RUN-027); never to order steps.
    Sleep(u64),
    /// The events emitted since the previous `events` step, exactly and in order.
    Events(Vec<Value>),
    /// Assemble the system prompt.
    Assemble(AgentOnly),
    /// Render the SDK text for a tool set.
    RenderSdk(RenderSdk),
    /// How many persistent code environments the dsh-codemode plugin's runtime holds now (`{}`).
    Environments(Map<String, Value>),
}

impl Action {
    /// The action key as written (`register`, `addHook`, ...).
    pub fn key(&self) -> &'static str {
        match self {
            Action::Register(_) => "register",
            Action::Dispose(_) => "dispose",
            Action::AddHook(_) => "addHook",
            Action::Restrict(_) => "restrict",
            Action::PresentAs(_) => "presentAs",
            Action::OpenAgent(_) => "openAgent",
            Action::DropAgent(_) => "dropAgent",
            Action::DisposePlugin(_) => "disposePlugin",
            Action::DisposeRegistry(_) => "disposeRegistry",
            Action::UnmountApproval(_) => "unmountApproval",
            Action::Get(_) => "get",
            Action::Schemas(_) => "schemas",
            Action::ExecutionMode(_) => "executionMode",
            Action::Present(_) => "present",
            Action::Definition(_) => "definition",
            Action::Execute(_) => "execute",
            Action::Start(_) => "start",
            Action::Await(_) => "await",
            Action::Abort(_) => "abort",
            Action::OpenGate(_) => "openGate",
            Action::WaitFor(_) => "waitFor",
            Action::Sleep(_) => "sleep",
            Action::Events(_) => "events",
            Action::Assemble(_) => "assemble",
            Action::RenderSdk(_) => "renderSdk",
            Action::Environments(_) => "environments",
        }
    }
}

/// `register: { tool, as? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RegisterStep {
    /// The fixture handle.
    pub tool: String,
    /// Handle for the registration.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub as_: Option<String>,
}

/// `addHook: { <kind>: listener, as? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Map<String, Value>", into = "Map<String, Value>")]
pub struct AddHook {
    /// The listener, tagged with its kind.
    pub listener: Listener,
    /// Handle for the registration.
    pub as_: Option<String>,
}

impl TryFrom<Map<String, Value>> for AddHook {
    type Error = String;

    fn try_from(mut map: Map<String, Value>) -> Result<Self, String> {
        let as_ = match map.shift_remove("as") {
            None => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => return Err("as: expected a string".into()),
        };
        if map.len() != 1 {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            return Err(format!("addHook needs exactly one listener kind key besides `as`, found {keys:?}"));
        }
        let listener = serde_json::from_value(Value::Object(map)).map_err(|e| e.to_string())?;
        Ok(AddHook { listener, as_ })
    }
}

impl From<AddHook> for Map<String, Value> {
    fn from(hook: AddHook) -> Self {
        let mut map = match serde_json::to_value(hook.listener) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if let Some(as_) = hook.as_ {
            map.insert("as".into(), Value::String(as_));
        }
        map
    }
}

/// `restrict: { agent?, allow?, deny?, as? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Restrict {
    /// The agent scope; absent = the plain context (feature `plain-context-restrict`, SCOPE-017).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Names allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Names denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
    /// Handle for the mask.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub as_: Option<String>,
}

/// `presentAs: { agent?, mode, as? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PresentAs {
    /// The agent scope; absent = the plain context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The presentation mode.
    pub mode: String,
    /// Handle for the presentation.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub as_: Option<String>,
}

/// `get: { name, agent? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Get {
    /// The tool name.
    pub name: String,
    /// The agent scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// `{ agent? }` (`schemas`, `assemble`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentOnly {
    /// The agent scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// `executionMode: { name, arguments, agent? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExecutionModeStep {
    /// The tool name.
    pub name: String,
    /// The call's arguments.
    pub arguments: Value,
    /// The agent scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// A call: `{ callId?, name, arguments, agent?, parent?, aborted? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Call {
    /// Default `call-<n>`, n the 1-based step number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool name.
    pub name: String,
    /// The arguments.
    pub arguments: Value,
    /// The agent scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The callId of another execution whose token becomes this call's parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The root call id the caller passes (`rootCallId`); absent, the call is its own root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_call_id: Option<String>,
    /// Start with an already-aborted signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<bool>,
}

/// `abort: { callId, reason? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AbortStep {
    /// The call to abort.
    pub call_id: String,
    /// The abort reason.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub reason: Option<Value>,
}

/// `renderSdk: { language, tools }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RenderSdk {
    /// The SDK language.
    pub language: String,
    /// The tool set.
    pub tools: Vec<Value>,
}

/// What a step must produce. Values may contain the matchers of `crate::matchers` (`$any`, `$regex`,
/// `$repeat`, `$ordered`).
/// A key given as `null` (`tool: null`) is `Some(Value::Null)`, distinct from an absent key.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    /// The API returned (`ok: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// The API threw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threw: Option<ThrewExpect>,
    /// The exact result.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub result: Option<Value>,
    /// A subset of the result.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub result_includes: Option<Value>,
    /// `get`: the schema, or `null`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub tool: Option<Value>,
    /// `definition`: `{ outputSchema, members }`, or `null` (nothing resolves).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub definition: Option<Value>,
    /// `present`: `{ methods, call, result? }`, or `null` (nothing resolves).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub present: Option<Value>,
    /// `schemas`: exactly these schemas, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schemas: Option<Vec<Value>>,
    /// `schemas`: exactly these names, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<Value>>,
    /// `executionMode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ExecutionModeValue>,
    /// `assemble`: the sections.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub sections: Option<Value>,
    /// `assemble`: the tools part.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub tools: Option<Value>,
    /// `environments`: the number of live persistent code environments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environments: Option<Value>,
    /// `renderSdk`: the text.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub text: Option<Value>,
}

/// `threw: { message, name?, code?, violations? }`; each may be a matcher.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ThrewExpect {
    /// The message (a string or a matcher).
    pub message: Value,
    /// The error's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Value>,
    /// The error's `code` (a HarnessError's, e.g. `UNSUPPORTED_SCHEMA`), compared when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Value>,
    /// The error's `violations` list (JsonSchemaError), compared in order when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violations: Option<Value>,
}

/// `tools.executionMode` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ExecutionModeValue {
    /// May run alongside others.
    Parallel,
    /// Runs alone.
    Exclusive,
}

impl ExecutionModeValue {
    /// `parallel` or `exclusive`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionModeValue::Parallel => "parallel",
            ExecutionModeValue::Exclusive => "exclusive",
        }
    }
}
