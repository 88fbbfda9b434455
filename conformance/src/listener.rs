//! Listener fixtures (`spec/README.md` § Listener fixtures): one struct per hook kind with its action
//! enum, the `hooks` block of `setup`, and [`Listener`], a listener tagged with its kind (the `addHook`
//! step and the `hooks/add` request).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::instruction::{ContextSpec, Instruction, ThrowSpec, True};

/// `setup.hooks`: listeners registered at session start, kind by kind, in this order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Hooks {
    /// `tools/preExecute` listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_execute: Option<Vec<PreExecuteListener>>,
    /// Guards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guards: Option<Vec<GuardListener>>,
    /// Execute wrappers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execute: Option<Vec<ExecuteListener>>,
    /// `tools/postExecute` listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_execute: Option<Vec<PostExecuteListener>>,
    /// Observe-only `tools/result` listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<ResultListener>>,
    /// Observe-only `tools/change` listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<ChangeListener>>,
    /// `tools/code-dispatch-log` listeners (the `tools` filter names the sub-call's tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_log: Option<Vec<DispatchLogListener>>,
}

/// A listener tagged with its kind: `{ preExecute: {...} }`, `{ guards: {...} }`, ...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Listener {
    /// A `preExecute` listener.
    PreExecute(PreExecuteListener),
    /// A guard.
    Guards(GuardListener),
    /// An execute wrapper.
    Execute(ExecuteListener),
    /// A `postExecute` listener.
    PostExecute(PostExecuteListener),
    /// A `results` listener.
    Results(ResultListener),
    /// A `changes` listener.
    Changes(ChangeListener),
    /// A `dispatchLog` listener.
    DispatchLog(DispatchLogListener),
}

impl Listener {
    /// The kind as the protocol spells it (`hooks/add` `kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            Listener::PreExecute(_) => "preExecute",
            Listener::Guards(_) => "guards",
            Listener::Execute(_) => "execute",
            Listener::PostExecute(_) => "postExecute",
            Listener::Results(_) => "results",
            Listener::Changes(_) => "changes",
            Listener::DispatchLog(_) => "dispatchLog",
        }
    }

    /// The fields every listener has.
    pub fn common(&self) -> ListenerCommon<'_> {
        match self {
            Listener::PreExecute(l) => l.common(),
            Listener::Guards(l) => l.common(),
            Listener::Execute(l) => l.common(),
            Listener::PostExecute(l) => l.common(),
            Listener::Results(l) => l.common(),
            Listener::Changes(l) => l.common(),
            Listener::DispatchLog(l) => l.common(),
        }
    }

    /// The listener's own JSON (without the kind key), as `hooks/add` sends it.
    pub fn body_json(&self) -> Value {
        let v = match self {
            Listener::PreExecute(l) => serde_json::to_value(l),
            Listener::Guards(l) => serde_json::to_value(l),
            Listener::Execute(l) => serde_json::to_value(l),
            Listener::PostExecute(l) => serde_json::to_value(l),
            Listener::Results(l) => serde_json::to_value(l),
            Listener::Changes(l) => serde_json::to_value(l),
            Listener::DispatchLog(l) => serde_json::to_value(l),
        };
        v.unwrap_or(Value::Null)
    }
}

/// The fields every listener has, borrowed from one listener.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListenerCommon<'a> {
    /// A label.
    pub id: &'a str,
    /// Register through this agent's scope.
    pub agent: Option<&'a str>,
    /// Register through this fixture plugin's plain context.
    pub plugin: Option<&'a str>,
    /// Only these tools; others pass through untouched.
    pub tools: Option<&'a [String]>,
    /// Register ahead of the existing listeners.
    pub prepend: bool,
    /// Instructions run when the listener is entered.
    pub r#do: Option<&'a [Instruction]>,
}

// One struct per kind, each repeating the common fields: `#[serde(flatten)]` and `deny_unknown_fields`
// do not combine, and unknown fields must be errors.
macro_rules! listener {
    ($(#[$doc:meta])* $name:ident { $(#[$fdoc:meta])* $field:ident : $ty:ty }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        pub struct $name {
            /// A label.
            pub id: String,
            /// Register through this agent's scope.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub agent: Option<String>,
            /// Register through the plain plugin context of this name (its own plugin fiber; not with
            /// `agent`): disposing the plugin disposes the listener (PIPE-024).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub plugin: Option<String>,
            /// Only these tools; any other tool passes through untouched.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub tools: Option<Vec<String>>,
            /// Register ahead of the existing listeners.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub prepend: Option<bool>,
            /// Instructions run when the listener is entered.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub r#do: Option<Vec<Instruction>>,
            $(#[$fdoc])*
            pub $field: $ty,
        }

        impl $name {
            /// The fields every listener has.
            pub fn common(&self) -> ListenerCommon<'_> {
                ListenerCommon {
                    id: &self.id,
                    agent: self.agent.as_deref(),
                    plugin: self.plugin.as_deref(),
                    tools: self.tools.as_deref(),
                    prepend: self.prepend.unwrap_or(false),
                    r#do: self.r#do.as_deref(),
                }
            }
        }
    };
}

listener!(
    /// A `preExecute` listener.
    PreExecuteListener {
        /// Its decision.
        decide: PreDecision
    }
);

listener!(
    /// A guard.
    GuardListener {
        /// A reason to deny, or `null` for no opinion (the key is required).
        #[serde(deserialize_with = "crate::instruction::nullable")]
        deny: Option<String>
    }
);

listener!(
    /// An execute (`around`) wrapper.
    ExecuteListener {
        /// What the wrapper does.
        around: Around
    }
);

listener!(
    /// A `postExecute` listener.
    PostExecuteListener {
        /// Its decision.
        decide: PostDecision
    }
);

listener!(
    /// A `tools/code-dispatch-log` listener: shapes the logged content of a settled `run_code` sub-call.
    DispatchLogListener {
        /// What it logs.
        decide: DispatchLogDecision
    }
);

/// A `dispatchLog` decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DispatchLogDecision {
    /// `next`: log what the rest of the waterfall returns.
    Next,
    /// `{ replace: [parts] }`: log these content parts instead.
    Replace(Vec<Value>),
    /// `{ returnValue: V }`: return `V` itself (any JSON value) as the content to log.
    ReturnValue(Value),
    /// `{ throw: message }`: fail (contained: the original content is logged).
    Throw(ThrowSpec),
}

/// An observe-only `tools/result` listener: runs `do` (which may throw).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResultListener {
    /// A label.
    pub id: String,
    /// Register through this agent's scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Register through the plain plugin context of this name (not with `agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Only these tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Register ahead of the existing listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepend: Option<bool>,
    /// Instructions run for each result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#do: Option<Vec<Instruction>>,
}

impl ResultListener {
    /// The fields every listener has.
    pub fn common(&self) -> ListenerCommon<'_> {
        ListenerCommon {
            id: &self.id,
            agent: self.agent.as_deref(),
            plugin: self.plugin.as_deref(),
            tools: self.tools.as_deref(),
            prepend: self.prepend.unwrap_or(false),
            r#do: self.r#do.as_deref(),
        }
    }
}

/// An observe-only `tools/change` listener: runs `do` for each registry change notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChangeListener {
    /// A label.
    pub id: String,
    /// Register through this agent's scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Register through the plain plugin context of this name (not with `agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Register ahead of the existing listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepend: Option<bool>,
    /// Instructions run for each notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#do: Option<Vec<Instruction>>,
}

impl ChangeListener {
    /// The fields every listener has.
    pub fn common(&self) -> ListenerCommon<'_> {
        ListenerCommon {
            id: &self.id,
            agent: self.agent.as_deref(),
            plugin: self.plugin.as_deref(),
            tools: None,
            prepend: self.prepend.unwrap_or(false),
            r#do: self.r#do.as_deref(),
        }
    }
}

/// A `preExecute` decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PreDecision {
    /// `next`: pass through.
    Next,
    /// `allow`.
    Allow,
    /// `{ deny: reason }`.
    Deny(String),
    /// `{ ask: reason | null }`.
    Ask(Option<String>),
    /// `{ throw: message }`.
    Throw(ThrowSpec),
    /// `{ afterNext: decision }`: call next, emit `{type: mark, label: <id>:next, decision}`, then return
    /// `decision` (or `next`).
    AfterNext(Box<PreDecision>),
}

/// What an execute wrapper does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Around {
    /// `next`: pass through.
    Next,
    /// `{ replaceSignal: { abortOnGate: gate } }` or `{ replaceSignal: { aborted: true } }`.
    ReplaceSignal(ReplaceSignal),
    /// `{ timeoutOnGate: gate }`.
    TimeoutOnGate(String),
    /// `{ fail: message }`: throw without calling next.
    Fail(ThrowSpec),
    /// `{ returnValue: V }`: a wrapper-authored success without calling next.
    ReturnValue(Value),
    /// `{ cachedFrom: callId }`: the result the wrapper saw for that earlier call.
    CachedFrom(String),
    /// `{ afterNext: [instructions] }`.
    AfterNext(Vec<Instruction>),
    /// `{ returnResult: { result, afterNext? } }`: return this authored result (after calling next and
    /// discarding its result when `afterNext: true`).
    ReturnResult(Box<ReturnResult>),
}

/// `{ result, afterNext? }` of `returnResult`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReturnResult {
    /// The authored result.
    pub result: AuthoredResult,
    /// Call next first (so the body runs) and discard what it returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_next: Option<bool>,
}

/// A wrapper-authored result in the protocol's Result shape: `{ isError, value?, content, error?,
/// meta?, additionalContexts? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuthoredResult {
    /// Failure or success.
    pub is_error: bool,
    /// The success's value.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::instruction::present")]
    pub value: Option<Value>,
    /// Content blocks.
    pub content: Vec<Value>,
    /// The failure's error: `message`, and `code` with `name` for routable info.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<AuthoredError>,
    /// Presentation metadata.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::instruction::present")]
    pub meta: Option<Value>,
    /// Additional contexts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_contexts: Option<Vec<ContextSpec>>,
}

/// `{ message, code?, name? }` of an authored failure (`code` and `name` together make its info).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthoredError {
    /// The message.
    pub message: String,
    /// The info's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The info's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The replacement signal a wrapper installs while `next` runs (restored afterwards).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ReplaceSignal {
    /// `{ abortOnGate: gate }`: a fresh signal, aborted when the gate opens.
    OnGate(AbortOnGate),
    /// `{ aborted: true }`: a signal already aborted when `next` is called.
    Aborted(PreAborted),
}

/// `{ abortOnGate: gate }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AbortOnGate {
    /// The gate whose opening aborts the fresh signal.
    pub abort_on_gate: String,
}

/// `{ aborted: true }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreAborted {
    /// Always `true`.
    pub aborted: True,
}

/// A `postExecute` decision. `accept` is written either as the bare word or as `{ accept: {...} }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PostDecision {
    /// `next` or `accept`.
    Word(PostWord),
    /// `{ accept: {...} }`, `{ block: {...} }` or `{ throw: message }`.
    Action(PostAction),
}

/// The bare-word post decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PostWord {
    /// Pass through.
    Next,
    /// Accept unchanged.
    Accept,
}

/// The single-key post decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PostAction {
    /// Accept with replacements.
    Accept(AcceptSpec),
    /// Block with feedback.
    Block(BlockSpec),
    /// Throw.
    Throw(ThrowSpec),
}

/// `{ content?, value?, additionalContexts? }`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AcceptSpec {
    /// Replacement content parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Value>>,
    /// Replacement value (`null` is a value here).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::instruction::present")]
    pub value: Option<Value>,
    /// Added contexts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_contexts: Option<Vec<ContextSpec>>,
}

/// `{ feedback: [parts], additionalContexts? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BlockSpec {
    /// Feedback content parts.
    pub feedback: Vec<Value>,
    /// Added contexts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_contexts: Option<Vec<ContextSpec>>,
}
