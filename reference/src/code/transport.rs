//! The `run_code` transport definition (upstream `createRunCodeTool` / `requireCodeTransport`): a
//! registry-owned [`RegisteredTool`] kept outside the filterable layers, listed for scopes whose mode is
//! `code` or `both` after the inherited and own tools (so `restrict` cannot remove it and no scope can
//! shadow it), never under `native`. Its description and `code` parameter description follow the mounted
//! runtime's language, read whenever the definition is read (one compiled definition per flavor, cached);
//! with no runtime mounted the TypeScript flavor is listed. Its body is the dispatch bridge
//! ([`super::bridge`]).
//!
//! Also here: the runtime check of an execution (upstream `requireCodeRuntime(defaultMode)`, with its two
//! messages), and the public dispatch-log records ([`CodeDispatchEvent`]) the bridge reports to
//! [`crate::ToolRuntime::on_code_dispatch`] observers.
//!
//! Spec: RUN-001, RUN-004, RUN-015, RUN-033, RUN-036, CODE-006, CODE-009.

use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use super::CodeRuntime;
use super::flavor::{RunCodeFlavor, json_string, output_spec, parameter_spec, resolve_flavor};
use crate::definition::{OutputDeclaration, Parameters, ToolDefinition, ToolSchema};
use crate::error::ToolFailure;
use crate::presentation::ToolMode;
use crate::registry::{RUN_CODE_NAME, RegisteredTool};
use crate::runtime::Inner;
use crate::schema::dsl::{parameter_spec_to_json_schema, value_spec_to_json_schema};
use crate::scope::ScopeKey;

/// `tool/code-dispatch-start`: a sub-call of a `run_code` program was started (appended to the calling
/// agent's session upstream; only for a transport call with an agent).
#[derive(Clone, Debug)]
pub struct CodeDispatchStart {
    /// The agent the transport call ran for.
    pub agent: ScopeKey,
    /// The root call id of the transport call's tree.
    pub root_call_id: String,
    /// The transport call's id.
    pub parent_call_id: String,
    /// The sub-call's id, `<parentCallId>:code:<n>`.
    pub sub_call_id: String,
    /// The tool the program called.
    pub name: String,
    /// The arguments as dispatched (a detached snapshot).
    pub arguments: Value,
}

/// `tool/code-dispatch`: a sub-call of a `run_code` program was committed: the record its start reported,
/// and its outcome.
#[derive(Clone, Debug)]
pub struct CodeDispatch {
    /// The sub-call as [`CodeDispatchStart`] reported it (agent, ids, tool, arguments).
    pub call: CodeDispatchStart,
    /// Whether the sub-call's final result is a failure.
    pub is_error: bool,
    /// The final result's content (upstream's `tools/code-dispatch-log` waterfall has no listeners here).
    pub content: Vec<Value>,
}

/// One dispatch-log record, in the order the bridge produces them.
#[derive(Clone, Debug)]
pub enum CodeDispatchEvent {
    /// A sub-call started.
    Start(CodeDispatchStart),
    /// A sub-call committed.
    Settled(CodeDispatch),
}

/// An observer of dispatch-log records (see [`crate::ToolRuntime::on_code_dispatch`]).
pub type CodeDispatchObserver = Arc<dyn Fn(&CodeDispatchEvent) + Send + Sync>;

/// The registry-owned transport: built once per runtime, compiled once per flavor.
pub(crate) struct CodeTransport {
    inner: Weak<Inner>,
    /// The `mode` config field, named by the missing-runtime message.
    default_mode: ToolMode,
    compiled: Mutex<Vec<(&'static str, Arc<RegisteredTool>)>>,
}

impl CodeTransport {
    pub(crate) fn new(inner: Weak<Inner>, default_mode: ToolMode) -> Self {
        Self { inner, default_mode, compiled: Mutex::new(Vec::new()) }
    }

    /// The definition as the mounted runtime's language presents it, or upstream's flavor error.
    pub(crate) fn definition(&self) -> Result<Arc<RegisteredTool>, super::flavor::FlavorError> {
        let runtime = self.inner.upgrade().and_then(|inner| inner.code_runtime());
        let flavor = resolve_flavor(runtime.as_ref().map(|r| r.language()))?;
        let mut compiled = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, tool)) = compiled.iter().find(|(language, _)| *language == flavor.language) {
            return Ok(Arc::clone(tool));
        }
        let tool = Arc::new(self.compile(&flavor));
        compiled.push((flavor.language, Arc::clone(&tool)));
        Ok(tool)
    }

    fn compile(&self, flavor: &RunCodeFlavor) -> RegisteredTool {
        let spec = parameter_spec(flavor);
        // Both specs are constants the DSL compiler accepts (see the unit test below).
        let parameters = parameter_spec_to_json_schema(&spec).unwrap_or(Value::Null);
        let output_schema = value_spec_to_json_schema(&output_spec()).unwrap_or(Value::Null);
        let weak = Weak::clone(&self.inner);
        let default_mode = self.default_mode;
        let def = ToolDefinition::new(
            RUN_CODE_NAME,
            flavor.description,
            Parameters::Dsl(spec),
            OutputDeclaration {
                schema: output_spec(),
                render: Arc::new(|_, value| Ok(super::render::render_block(value))),
                presentation_meta: None,
            },
            Arc::new(move |args, ctx| Box::pin(super::bridge::execute(Weak::clone(&weak), default_mode, args, ctx))),
        );
        RegisteredTool {
            schema: ToolSchema {
                name: RUN_CODE_NAME.to_owned(),
                description: flavor.description.to_owned(),
                parameters: Arc::new(parameters),
            },
            def,
            output_schema,
            validates_args: true,
        }
    }
}

/// The language keys an SDK renderer exists for (upstream `SDK_RENDERERS`).
const SDK_LANGUAGES: [&str; 2] = ["typescript", "python"];

/// Upstream `requireCodeRuntime(mode)`: the mounted runtime, or the misconfiguration error.
pub(crate) fn require_runtime(inner: &Inner, mode: ToolMode) -> Result<Arc<dyn CodeRuntime>, ToolFailure> {
    let Some(runtime) = inner.code_runtime() else {
        return Err(ToolFailure::message(format!(
            "dsh-tools: mode \"{mode}\" requires a code runtime — load a ctx.codeRuntime implementation (e.g. @deepseek-ai/dsh-code-runtime-worker-thread) or set tools mode to \"native\""
        )));
    };
    if !SDK_LANGUAGES.contains(&runtime.language()) {
        let known: Vec<String> = SDK_LANGUAGES.iter().map(|l| json_string(l)).collect();
        return Err(ToolFailure::message(format!(
            "dsh-tools: no SDK renderer registered for runtime language {} (known: {})",
            json_string(runtime.language()),
            known.join(", ")
        )));
    }
    Ok(runtime)
}

/// Whether JavaScript's `String.prototype.trim` leaves nothing (ECMAScript WhiteSpace and
/// LineTerminator code points; Rust's `char::is_whitespace` differs on U+0085 and U+FEFF).
pub(crate) fn js_trim_is_empty(s: &str) -> bool {
    s.chars().all(|c| match c {
        '\u{0085}' => false,
        '\u{FEFF}' => true,
        c => c.is_whitespace(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_compile_and_trim_follows_javascript() {
        let spec = parameter_spec(&super::super::flavor::TYPESCRIPT_FLAVOR);
        assert!(parameter_spec_to_json_schema(&spec).is_ok());
        assert!(value_spec_to_json_schema(&output_spec()).is_ok());
        assert!(js_trim_is_empty(" \t\n\u{FEFF}\u{3000}"));
        assert!(!js_trim_is_empty("\u{0085}"));
        assert!(!js_trim_is_empty(" x "));
    }
}
