//! The `run_code` schema flavors (upstream `RUN_CODE_FLAVORS`): the model-facing description and `code`
//! parameter description per program language, the TypeScript fallback when no runtime is mounted, the
//! language-independent `description` parameter, the compiled parameter schema (the `defineTool` DSL
//! `{ code, description }`, both required strings), the output declaration `{ logs: string[], result?: json }`
//! and the "no run_code schema flavor" error for a runtime language no flavor exists for.
//!
//! Spec: RUN-001, RUN-033, RUN-036, CODE-006; CDM-045 (the summary without the image sentence).

use std::fmt;

use serde_json::{Value, json};

/// One language's model-facing `run_code` texts (upstream `RunCodeFlavor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunCodeFlavor {
    /// The language key (`typescript`, `python`).
    pub language: &'static str,
    /// The tool description.
    pub description: &'static str,
    /// The description without its closing sentence on image results, for a transport that attaches
    /// none (dsh-codemode's `code_run`).
    pub summary: &'static str,
    /// The `code` parameter's description.
    pub code_description: &'static str,
}

// Each description is its summary and the sentence on images, written once.
macro_rules! images_sentence {
    () => {
        "Image-bearing subtool results are attached after the run."
    };
}
macro_rules! typescript_summary {
    () => {
        "Execute a TypeScript program against the available tools. Takes two required arguments: `code`, the BODY of an async function (erasable syntax only; top-level `await` and `return` work), and `description`, a short summary of what the program does. Call tools as `await tools.name(args)` per the declarations in the system prompt. Only what you print or return is program output — curate it."
    };
}
macro_rules! python_summary {
    () => {
        "Execute a Python program against the available tools. Takes two required arguments: `code`, the BODY of an async function (top-level `await` and `return` work), and `description`, a short summary of what the program does. Call tools as `await tools.name(args)` per the declarations in the system prompt. Use `print(...)` and/or `return <value>` for program output — curate it."
    };
}

/// The TypeScript flavor, also the fallback for a schema read with no runtime mounted.
pub const TYPESCRIPT_FLAVOR: RunCodeFlavor = RunCodeFlavor {
    language: "typescript",
    description: concat!(typescript_summary!(), " ", images_sentence!()),
    summary: typescript_summary!(),
    code_description: "The program: the body of an async TypeScript function.",
};

/// The Python flavor.
pub const PYTHON_FLAVOR: RunCodeFlavor = RunCodeFlavor {
    language: "python",
    description: concat!(python_summary!(), " ", images_sentence!()),
    summary: python_summary!(),
    code_description: "The program: the body of an async Python function.",
};

/// Every flavor, in upstream's table order (the order the error lists them in).
pub const RUN_CODE_FLAVORS: [RunCodeFlavor; 2] = [TYPESCRIPT_FLAVOR, PYTHON_FLAVOR];

/// The `description` parameter's description (the same for every language).
pub const RUN_CODE_DESCRIPTION_PARAM_DESCRIPTION: &str = "Clear, concise description of what this program does in active voice, 5-10 words (shown in the UI). Examples: \"Count TODO markers across packages\"; \"Read failing test and its fixture\"; \"Rename config key in every cordis.yml\".";

/// A mounted runtime whose language has no flavor (upstream throws this from the schema getters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlavorError {
    /// Upstream's message.
    pub message: String,
}

impl fmt::Display for FlavorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FlavorError {}

/// The flavor for the mounted runtime's language (`None`: no runtime mounted, the TypeScript fallback),
/// or upstream's `dsh-tools: no run_code schema flavor registered for runtime language "<l>" (known:
/// "typescript", "python")`.
pub fn resolve_flavor(language: Option<&str>) -> Result<RunCodeFlavor, FlavorError> {
    let Some(language) = language else { return Ok(TYPESCRIPT_FLAVOR) };
    if let Some(flavor) = RUN_CODE_FLAVORS.iter().find(|f| f.language == language) {
        return Ok(*flavor);
    }
    let known: Vec<String> = RUN_CODE_FLAVORS.iter().map(|f| json_string(f.language)).collect();
    Err(FlavorError {
        message: format!(
            "dsh-tools: no run_code schema flavor registered for runtime language {} (known: {})",
            json_string(language),
            known.join(", ")
        ),
    })
}

/// `JSON.stringify` of a string.
pub(crate) fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The `defineTool` parameter DSL of a flavor: `{ code, description }`, both required strings.
pub fn parameter_spec(flavor: &RunCodeFlavor) -> Value {
    json!({
        "code": { "type": "string", "required": true, "description": flavor.code_description },
        "description": { "type": "string", "required": true, "description": RUN_CODE_DESCRIPTION_PARAM_DESCRIPTION },
    })
}

/// The output value DSL: `{ logs: string[] (required), result?: json }`, no other properties.
pub fn output_spec() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "logs": { "type": "array", "required": true, "items": { "type": "string" } },
            "result": { "type": "json" },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_languages_fail_loud_and_none_falls_back() {
        assert_eq!(resolve_flavor(None), Ok(TYPESCRIPT_FLAVOR));
        assert_eq!(resolve_flavor(Some("python")), Ok(PYTHON_FLAVOR));
        assert_eq!(
            resolve_flavor(Some("ruby")).map_err(|e| e.message),
            Err("dsh-tools: no run_code schema flavor registered for runtime language \"ruby\" (known: \"typescript\", \"python\")".to_owned())
        );
    }
}
