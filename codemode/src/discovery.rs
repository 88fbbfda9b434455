//! The discovery tools `code_tools_list`, `code_tools_search`, `code_tools_describe` and `code_debug`:
//! ordinary tools registered in the preset (so argument validation, policy, approval, guards and timeouts
//! apply), masked by the name rule, bindings of every program. Each reports what the calling agent sees,
//! classified with the same cached classification as the request surface, with the caller's own schemas.
//!
//! Shapes (the seed gives none; CDM-032): an entry is `{ name, description, presentation }` with
//! `presentation` `native` or `program-only`; `code_tools_describe` adds `parameters`; `code_debug` is
//! `{ agent, scopeLabel, ownership, masked }`.
//!
//! Spec: CDM-032..CDM-034, CDM-043.

use std::sync::Arc;

use dsh_tools::{OutputDeclaration, Parameters, ToolDefinition, ToolFailure, ToolRunContext};
use serde_json::{Value, json};

use crate::rules::{CODE_DEBUG, CODE_TOOLS_DESCRIBE, CODE_TOOLS_LIST, CODE_TOOLS_SEARCH};
use crate::shared::Shared;
use crate::view::CatalogView;

type Answer = fn(&Shared, &CatalogView, &Value, &ToolRunContext) -> Result<Value, ToolFailure>;

/// The four definitions, in registration order.
pub(crate) fn definitions(shared: &Arc<Shared>) -> Vec<ToolDefinition> {
    let string = |description: &str| json!({ "type": "string", "required": true, "description": description });
    vec![
        tool(shared, CODE_TOOLS_LIST, "List every tool the program can call, with how the model reaches it.", json!({}), list),
        tool(
            shared,
            CODE_TOOLS_SEARCH,
            "Find tools whose name or description contains `query` (case-insensitive).",
            json!({ "query": string("text to look for") }),
            search,
        ),
        tool(shared, CODE_TOOLS_DESCRIBE, "Describe one tool: its parameters and how the model reaches it.", json!({ "name": string("the tool name") }), describe),
        tool(shared, CODE_DEBUG, "Show dsh-codemode's view of this agent: scope label, ownership rule, masked tools.", json!({}), debug),
    ]
}

fn tool(shared: &Arc<Shared>, name: &str, description: &str, parameters: Value, answer: Answer) -> ToolDefinition {
    let shared = Arc::clone(shared);
    ToolDefinition::new(
        name,
        description,
        Parameters::Dsl(parameters),
        OutputDeclaration {
            schema: json!({ "type": "json" }),
            render: Arc::new(|_, value| Ok(vec![json!({ "type": "text", "text": value.to_string() })])),
            presentation_meta: None,
        },
        Arc::new(move |args, ctx| {
            let shared = Arc::clone(&shared);
            Box::pin(async move {
                let runtime = shared.runtime.upgrade().ok_or_else(|| ToolFailure::message("dsh-codemode: the tool runtime is gone"))?;
                let view = shared.view_for(&runtime, ctx.agent());
                answer(&shared, &view, &args, &ctx)
            })
        }),
    )
}

fn entry(view: &CatalogView, index: usize) -> Value {
    let (schema, presentation) = &view.entries()[index];
    json!({ "name": schema.name, "description": schema.description, "presentation": presentation.as_str() })
}

fn list(_: &Shared, view: &CatalogView, _: &Value, _: &ToolRunContext) -> Result<Value, ToolFailure> {
    Ok(Value::Array((0..view.entries().len()).map(|i| entry(view, i)).collect()))
}

fn search(_: &Shared, view: &CatalogView, args: &Value, _: &ToolRunContext) -> Result<Value, ToolFailure> {
    let query = args["query"].as_str().unwrap_or_default().to_lowercase();
    let hits = view.entries().iter().enumerate().filter(|(_, (schema, _))| {
        schema.name.to_lowercase().contains(&query) || schema.description.to_lowercase().contains(&query)
    });
    Ok(Value::Array(hits.map(|(i, _)| entry(view, i)).collect()))
}

fn describe(_: &Shared, view: &CatalogView, args: &Value, _: &ToolRunContext) -> Result<Value, ToolFailure> {
    let name = args["name"].as_str().unwrap_or_default();
    let index = view.entries().iter().position(|(schema, _)| schema.name == name).ok_or_else(|| ToolFailure::message(format!("unknown tool \"{name}\"")))?;
    let mut described = entry(view, index);
    described["parameters"] = (*view.entries()[index].0.parameters).clone();
    Ok(described)
}

fn debug(shared: &Shared, view: &CatalogView, _: &Value, ctx: &ToolRunContext) -> Result<Value, ToolFailure> {
    Ok(json!({
        "agent": ctx.agent().map(|a| a.name().to_owned()),
        "scopeLabel": shared.preset.as_ref().map(|p| p.name().to_owned()),
        "ownership": shared.preset.is_some(),
        "masked": view.masked(),
    }))
}
