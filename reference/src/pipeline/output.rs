//! The success path of a body value: lossless snapshot (`value is not lossless JSON`; JavaScript property
//! order), validation against the output
//! schema (`INVALID_TOOL_OUTPUT` with every violation), `render(args, value)` to content and, for
//! non-nested calls, `presentationMeta(args, value)` to meta; a projector failure is
//! `output.<projector> failed: <message>`.
//!
//! Spec: OUT-001..OUT-011, OUT-013, FIN-010, FIN-011.

use serde_json::Value;

use crate::error::ToolFailure;
use crate::execution::ToolExecution;
use crate::registry::RegisteredTool;
use crate::result::ToolExecutionResult;
use crate::value::{dismantle, js_snapshot};

use crate::callback::contain;

fn projection_failure(tool: &str, projector: &str, message: String) -> ToolFailure {
    ToolFailure::invalid_output(tool, &[format!("output.{projector} failed: {message}")])
}

/// Build the canonical success for `value`, or the `INVALID_TOOL_OUTPUT` failure.
pub(crate) fn success(exec: &ToolExecution, tool: &RegisteredTool, mut value: Value) -> Result<ToolExecutionResult, ToolFailure> {
    let name = tool.def.name.as_str();
    if !js_snapshot(&mut value) {
        dismantle(value);
        return Err(ToolFailure::invalid_output(name, &["value is not lossless JSON".to_owned()]));
    }
    let violations = tool.output_plan.violations(&value, "value");
    if !violations.is_empty() {
        dismantle(value);
        return Err(ToolFailure::invalid_output(name, &violations));
    }
    let Some(output) = tool.def.output.as_ref() else {
        dismantle(value);
        return Err(ToolFailure::invalid_output(name, &["output.render failed: missing".to_owned()]));
    };
    let rendered = match contain(|| (output.render)(&exec.arguments, &value)) {
        Ok(Ok(content)) => content,
        Ok(Err(message)) | Err(message) => {
            dismantle(value);
            return Err(projection_failure(name, "render", message));
        }
    };
    let mut content = rendered;
    if !content.iter_mut().all(js_snapshot) {
        dismantle(value);
        return Err(ToolFailure::invalid_output(name, &["output.render returned non-lossless JSON".to_owned()]));
    }
    let mut meta = None;
    if exec.parent.is_none() {
        if let Some(project) = &output.presentation_meta {
            match contain(|| project(&exec.arguments, &value)) {
                Ok(Ok(mut projected)) => {
                    if !js_snapshot(&mut projected) {
                        dismantle(value);
                        return Err(ToolFailure::invalid_output(
                            name,
                            &["output.presentationMeta returned non-lossless JSON".to_owned()],
                        ));
                    }
                    meta = Some(projected);
                }
                Ok(Err(message)) | Err(message) => {
                    dismantle(value);
                    return Err(projection_failure(name, "presentationMeta", message));
                }
            }
        }
    }
    let concludes_turn = exec.state.concluded.load(std::sync::atomic::Ordering::SeqCst);
    Ok(ToolExecutionResult::Success { value, content, meta, additional_contexts: Vec::new(), concludes_turn })
}
