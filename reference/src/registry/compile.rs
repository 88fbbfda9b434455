//! The registration checks (upstream `defineTool` then `register`), with upstream's exact messages and
//! check order: DSL `timeoutMs`, DSL parameter compilation, DSL output compilation (the `defineTool`
//! stage); then output presence, output schema subset, `timeoutMs`, reserved name (the `register`
//! stage). The layer-dependent duplicate check is the registry's own ([`super::Registry::register`]).
//!
//! Spec: REG-005..REG-011, REG-020.

use std::sync::Arc;

use serde_json::Value;

use super::{RUN_CODE_NAME, RegisteredTool, dismantle_definition_values};
use crate::definition::{Parameters, ToolDefinition, ToolSchema};
use crate::error::{RegisterError, RegisterErrorKind};
use crate::schema::check::assert_supported_json_schema;
use crate::schema::dsl::{parameter_spec_to_json_schema, value_spec_to_json_schema};
use crate::value::{dismantle, js_property_order};

fn timeout_ok(t: Option<f64>) -> bool {
    t.is_none_or(|t| t.is_finite() && t > 0.0)
}

/// Compile and validate one definition (everything but the layer-dependent duplicate check).
pub(super) fn prepare(mut def: ToolDefinition) -> Result<RegisteredTool, RegisterError> {
    match compile(&mut def) {
        Ok((parameters, output_schema, validates_args)) => {
            let schema = ToolSchema {
                name: def.name.clone(),
                description: def.description.clone(),
                parameters: Arc::new(parameters),
            };
            Ok(RegisteredTool::new(def, schema, output_schema, validates_args))
        }
        Err(error) => {
            dismantle_definition_values(&mut def);
            Err(error)
        }
    }
}

/// The registration checks in upstream order; yields the parameter schema, the output schema and whether
/// arguments are validated.
fn compile(def: &mut ToolDefinition) -> Result<(Value, Value, bool), RegisterError> {
    let name = def.name.clone();
    let Some(output) = def.output.as_mut() else {
        return Err(RegisterError::new(
            RegisterErrorKind::MissingOutput,
            "TypeError",
            format!("tool \"{name}\" must declare output {{ schema, render, presentationMeta? }}"),
        ));
    };
    js_property_order(&mut output.schema);
    // Compiled DSL schemas, built before the register-stage checks below (as `defineTool` runs first).
    let compiled = match &mut def.parameters {
        Parameters::Dsl(spec) => {
            // The `defineTool` stage.
            if !timeout_ok(def.timeout_ms) {
                return Err(RegisterError::new(
                    RegisterErrorKind::InvalidTimeout,
                    "Error",
                    format!("defineTool({name}): timeoutMs must be a positive finite number"),
                ));
            }
            js_property_order(spec);
            let parameters = parameter_spec_to_json_schema(spec).map_err(RegisterError::schema)?;
            match value_spec_to_json_schema(&output.schema) {
                Ok(output_schema) => Some((parameters, output_schema)),
                Err(error) => {
                    dismantle(parameters);
                    return Err(RegisterError::schema(error));
                }
            }
        }
        Parameters::Raw(schema) => {
            js_property_order(schema);
            assert_supported_json_schema(&output.schema).map_err(RegisterError::schema)?;
            None
        }
    };
    let rejected = |compiled: Option<(Value, Value)>, error: RegisterError| {
        if let Some((parameters, output_schema)) = compiled {
            dismantle(parameters);
            dismantle(output_schema);
        }
        Err(error)
    };
    if !timeout_ok(def.timeout_ms) {
        return rejected(
            compiled,
            RegisterError::new(
                RegisterErrorKind::InvalidTimeout,
                "TypeError",
                format!("tool \"{name}\" timeoutMs must be a positive finite number"),
            ),
        );
    }
    if name == RUN_CODE_NAME {
        return rejected(
            compiled,
            RegisterError::new(
                RegisterErrorKind::ReservedName,
                "Error",
                format!(
                    "tool name \"{RUN_CODE_NAME}\" is reserved for the Code Mode presentation transport and cannot be registered or shadowed"
                ),
            ),
        );
    }
    Ok(match compiled {
        Some((parameters, output_schema)) => (parameters, output_schema, true),
        None => {
            let parameters = match &def.parameters {
                Parameters::Raw(schema) | Parameters::Dsl(schema) => crate::value::deep_clone(schema),
            };
            let output_schema = def.output.as_ref().map(|o| crate::value::deep_clone(&o.schema)).unwrap_or_default();
            (parameters, output_schema, false)
        }
    })
}
