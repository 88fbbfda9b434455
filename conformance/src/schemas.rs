//! The published JSON Schemas (`spec/schema/`), embedded at build time and compiled once.
//!
//! The loader validates scenario and catalog files against them; `protocol` validates every message an
//! adapter sends. Embedding ties the schema version to this crate's format version.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

/// `spec/schema/scenario.schema.json`.
pub const SCENARIO: &str = include_str!("../../spec/schema/scenario.schema.json");
/// `spec/schema/rules.schema.json`.
pub const RULES: &str = include_str!("../../spec/schema/rules.schema.json");

/// Compiles a schema text; the error names the schema.
pub fn compile(name: &str, text: &str) -> Result<Validator, String> {
    let schema: Value = serde_json::from_str(text).map_err(|e| format!("schema {name}: {e}"))?;
    jsonschema::draft202012::new(&schema).map_err(|e| format!("schema {name}: {e}"))
}

/// The compiled scenario-file schema.
pub fn scenario() -> Result<&'static Validator, String> {
    static V: OnceLock<Result<Validator, String>> = OnceLock::new();
    V.get_or_init(|| compile("scenario.schema.json", SCENARIO)).as_ref().map_err(Clone::clone)
}

/// The compiled rule-catalog schema.
pub fn rules() -> Result<&'static Validator, String> {
    static V: OnceLock<Result<Validator, String>> = OnceLock::new();
    V.get_or_init(|| compile("rules.schema.json", RULES)).as_ref().map_err(Clone::clone)
}
