//! The `run_code` transport definition (upstream `createRunCodeTool` / `requireCodeTransport`): a
//! registry-owned [`RegisteredTool`] kept outside the filterable layers, listed for scopes whose mode is
//! `code` or `both` after the inherited and own tools (so `restrict` cannot remove it and no scope can
//! shadow it), never under `native`. Its description and `code` parameter description follow the mounted
//! runtime's language, read whenever the definition is read (one compiled definition per flavor, cached);
//! with no runtime mounted the TypeScript flavor is listed. Its body is the dispatch bridge
//! ([`super::bridge`]). Its only presenter is `presentCall` (the model-authored description titles an
//! `execute` card over the program); no `presentResult`, classifier, timeout or `presentationMeta`, so
//! every call is exclusive and a UI keeps the generic result card.
//!
//! The registry sees it as a [`ReservedTransport`] (the registry sits below this layer and never imports
//! it); the runtime facade also reads it directly for the flavor error of a schema read.
//!
//! Spec: RUN-001, RUN-033, RUN-036, CODE-006, CODE-009, MODE-005, RUN-043, RUN-044, RUN-045.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::bridge::TransportHost;
use super::flavor::{FlavorError, RunCodeFlavor, output_spec, parameter_spec, resolve_flavor};
use crate::definition::{OutputDeclaration, Parameters, ToolDefinition, ToolSchema};
use crate::presentation::{RUN_CODE_NAME, ToolMode};
use crate::registry::{RegisteredTool, ReservedTransport};
use crate::schema::dsl::{parameter_spec_to_json_schema, value_spec_to_json_schema};
use crate::views::{GenericCallView, ToolCallKind, ToolCallView};

/// The registry-owned transport: built once per runtime, compiled once per flavor.
pub(crate) struct CodeTransport {
    host: Arc<TransportHost>,
    /// The `mode` config field, named by the missing-runtime message.
    default_mode: ToolMode,
    compiled: Mutex<Vec<(&'static str, Arc<RegisteredTool>)>>,
}

impl CodeTransport {
    pub(crate) fn new(host: Arc<TransportHost>, default_mode: ToolMode) -> Self {
        Self { host, default_mode, compiled: Mutex::new(Vec::new()) }
    }

    /// The definition as the mounted runtime's language presents it, or upstream's flavor error.
    pub(crate) fn definition(&self) -> Result<Arc<RegisteredTool>, FlavorError> {
        let runtime = self.host.runtime.get();
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
        let host = Arc::clone(&self.host);
        let default_mode = self.default_mode;
        let mut def = ToolDefinition::new(
            RUN_CODE_NAME,
            flavor.description,
            Parameters::Dsl(spec),
            OutputDeclaration {
                schema: output_spec(),
                render: {
                    // The cap of the runtime mounted when the output is rendered.
                    let runtime = Arc::clone(&self.host.runtime);
                    Arc::new(move |_, value| {
                        let cap = runtime.get().and_then(|r| super::model_text_cap(r.as_ref()));
                        Ok(super::render::render_block(value, cap))
                    })
                },
                presentation_meta: None,
            },
            Arc::new(move |args, ctx| Box::pin(super::bridge::execute(Arc::clone(&host), default_mode, args, ctx))),
        );
        def.present_call = Some(Arc::new(present_call));
        let schema = ToolSchema {
            name: RUN_CODE_NAME.to_owned(),
            description: flavor.description.to_owned(),
            parameters: Arc::new(parameters),
        };
        RegisteredTool::new(def, schema, output_schema, true)
    }
}

/// upstream's `presentCall: args => ({ card: 'generic', title: args.description, kind: 'execute',
/// rawInput: args.code })`, reached only with arguments its schema admits (soft validation).
fn present_call(args: &Value) -> Option<ToolCallView> {
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(ToolCallView::Generic(GenericCallView {
        title: text("description")?,
        kind: Some(ToolCallKind::Execute),
        raw_input: Some(Value::String(text("code")?)),
        content: None,
        locations: None,
    }))
}

impl ReservedTransport for CodeTransport {
    fn definition(&self) -> Option<Arc<RegisteredTool>> {
        CodeTransport::definition(self).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_compile() {
        let spec = parameter_spec(&super::super::flavor::TYPESCRIPT_FLAVOR);
        assert!(parameter_spec_to_json_schema(&spec).is_ok());
        assert!(value_spec_to_json_schema(&output_spec()).is_ok());
    }
}
