//! `prompt/assemble` (feature `prompt`): the session's `dsh_tools::SystemPrompt`, built from
//! `setup.prompt` (`toolOrder`) with the runtime contributing to it, assembled for the global view or one
//! agent. Sections are reported as upstream's assembly carries them, `{ name, text }` in ascending order,
//! empty ones included; tools as `{ name, description, parameters }` in the assembled order. A rejected
//! assembly is a `threw` outcome (`Error`).
//!
//! Spec: PROMPT-001..PROMPT-017.

use dsh_conformance::fixture::Setup;
use dsh_tools::prompt::PromptConfig;
use dsh_tools::{ScopeKey, SystemPrompt};
use serde_json::{Value, json};

use super::deep;
use super::rpc::{Failure, SETUP_REJECTED};

/// The session's prompt service: `setup.prompt.toolOrder`, upstream's defaults otherwise. A `toolOrder`
/// upstream rejects at load rejects the setup with its message.
pub fn system_prompt(setup: &Setup) -> Result<SystemPrompt, Failure> {
    let mut config = PromptConfig::default();
    config.tool_order = setup.prompt.as_ref().and_then(|p| p.tool_order.clone());
    SystemPrompt::new(config)
        .map_err(|e| Failure::new(SETUP_REJECTED, format!("setup: the prompt config was rejected: {}", e.message)))
}

/// `prompt/assemble` for `scope` (`None`: the global view).
pub fn assemble(prompt: &SystemPrompt, scope: Option<&ScopeKey>) -> Result<Value, Failure> {
    match prompt.assemble(scope) {
        Ok(assembly) => {
            let sections: Vec<Value> =
                assembly.sections.iter().map(|s| json!({ "name": s.name, "text": s.text })).collect();
            let tools: Vec<Value> = assembly.tools.iter().map(|t| t.to_json()).collect();
            drop(assembly);
            Ok(deep::object([
                ("outcome", json!({ "ok": true })),
                ("sections", Value::Array(sections)),
                ("tools", Value::Array(tools)),
            ]))
        }
        Err(e) => Ok(json!({ "outcome": { "threw": { "message": e.message, "name": e.name } } })),
    }
}
