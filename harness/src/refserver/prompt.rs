//! `prompt/assemble` (feature `prompt`): the session's `dsh_tools::SystemPrompt`, built from
//! `setup.prompt` (`toolOrder`) with the runtime contributing to it, plus the setup's own sections and
//! `system-prompt/assemble` listeners (`contribute`), assembled for the global view or one agent.
//! Sections are reported as upstream's assembly carries them, `{ name, text }` in ascending order,
//! empty ones included; tools as `{ name, description, parameters }` in the assembled order. A rejected
//! assembly is a `threw` outcome (`Error`).
//!
//! Spec: PROMPT-001..PROMPT-019.

use std::sync::Arc;

use dsh_conformance::fixture::{AssembleListener, PromptSetup, Setup};
use dsh_tools::prompt::{AssembledSection, PromptAssembly, PromptConfig, PromptSection, SectionText};
use dsh_tools::{HookGuard, ScopeKey, SystemPrompt, ToolSchema};
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

/// Registers `setup.prompt.sections` and then `setup.prompt.assemble`, in order, each through the global
/// layer or its agent's scope (`scope_of`). A section the service rejects (a duplicate name in its layer)
/// rejects the setup with the service's message.
pub fn contribute(
    prompt: &SystemPrompt,
    setup: &PromptSetup,
    scope_of: impl Fn(Option<&str>) -> Result<Option<ScopeKey>, Failure>,
) -> Result<Vec<HookGuard>, Failure> {
    let mut guards = Vec::new();
    for section in setup.sections.iter().flatten() {
        let scope = scope_of(section.agent.as_deref())?;
        let registered = PromptSection {
            name: section.name.clone(),
            order: section.order,
            text: SectionText::Static(section.text.clone()),
        };
        let guard = prompt.section(scope.as_ref(), registered).map_err(|e| {
            Failure::new(
                SETUP_REJECTED,
                format!("setup: prompt section {:?} was rejected: {}", section.name, e.message),
            )
        })?;
        guards.push(guard);
    }
    for listener in setup.assemble.iter().flatten() {
        let scope = scope_of(listener.agent.as_deref())?;
        let replace_tools = match listener.replace.as_ref().and_then(|r| r.tools.as_ref()) {
            Some(tools) => Some(tools.iter().map(tool_schema).collect::<Result<Vec<_>, _>>()?),
            None => None,
        };
        let listener = listener.clone();
        let edit = move |_: &dsh_tools::prompt::AssembleContext, assembly: PromptAssembly| {
            Ok(edit_assembly(&listener, replace_tools.as_deref(), assembly))
        };
        guards.push(prompt.on_assemble(scope.as_ref(), Arc::new(edit)));
    }
    Ok(guards)
}

/// What one fixture listener does to the assembly the rest of the waterfall returned: drop by name, then
/// replace the lists it names. A replacement section carries no order (an assembly reports none).
fn edit_assembly(
    listener: &AssembleListener,
    tools: Option<&[ToolSchema]>,
    mut assembly: PromptAssembly,
) -> PromptAssembly {
    if let Some(drop) = &listener.drop {
        let sections = drop.sections.as_deref().unwrap_or_default();
        let names = drop.tools.as_deref().unwrap_or_default();
        assembly.sections.retain(|s| !sections.contains(&s.name));
        assembly.tools.retain(|t| !names.contains(&t.name));
    }
    if let Some(sections) = listener.replace.as_ref().and_then(|r| r.sections.as_ref()) {
        assembly.sections = sections
            .iter()
            .map(|s| AssembledSection { name: s.name.clone(), order: 0.0, text: s.text.clone() })
            .collect();
    }
    if let Some(tools) = tools {
        assembly.tools = tools.to_vec();
    }
    assembly
}

/// A replacement tool `{ name, description, parameters }` as the reference's schema type.
fn tool_schema(tool: &Value) -> Result<ToolSchema, Failure> {
    let text = |key: &str| tool.get(key).and_then(Value::as_str).map(str::to_owned);
    match (text("name"), text("description"), tool.get("parameters")) {
        (Some(name), Some(description), Some(parameters)) => {
            Ok(ToolSchema { name, description, parameters: Arc::new(parameters.clone()) })
        }
        _ => Err(Failure::params(
            "setup.prompt.assemble: a replacement tool needs a string name, a string description and parameters",
        )),
    }
}
