//! [`ArgumentCheck`]: a tool's own argument check against the full JSON Schema it was built from (the
//! schema *before* lowering), compiled once with the `jsonschema` crate and run by typed and MCP tool
//! bodies before the handler or the server sees the arguments. A violation is an `INVALID_ARGS` failure
//! naming the path (`invalid arguments: "limit" is greater than the maximum of 20`).
//!
//! Lowering ([`super::lower`]) widens a schema into the subset the registry shows the model, dropping
//! constraints the subset has no word for (`minimum`, `pattern`, `format`, `anyOf`, …). Checking the
//! original enforces every one of them. What `jsonschema` would not enforce is either made enforceable or
//! refused when the check is built ([`ArgumentCheckError`], naming the path and the reason):
//! - `format`: asserted (not an annotation); the numeric formats `schemars` emits (`int8`…`int64`,
//!   `uint8`…`uint64`, `int`, `uint`) become the bounds of their type, `float`/`double`/`int128`/`uint128`
//!   are accepted as any number, `char` is one character, `ip` an IPv4 or IPv6 address; any other unknown format is refused;
//! - OpenAPI's `nullable: true` beside a single `type` admits `null`, as the lowered schema the model sees
//!   does;
//! - a schema nesting deeper than [`lower::MAX_DEPTH`](super::lower::MAX_DEPTH) levels is refused (it
//!   would not have lowered either), and arguments nesting deeper than [`MAX_ARGUMENT_DEPTH`] levels are
//!   rejected without validation, so nothing recurses without bound.
//!
//! The registry itself never checks a raw-registered tool's arguments (ARG-016): this check is the
//! tool's own input validation, inside its body, so the conformance profile is unchanged.
//!
//! Spec: ARG-016 (kept: the check belongs to the tool, not the registry).

use std::fmt;

use serde_json::{Map, Value};

use crate::error::ToolFailure;

/// Arguments nesting deeper than this are rejected before validation (`INVALID_ARGS`).
pub const MAX_ARGUMENT_DEPTH: usize = 512;

/// `(format, minimum, maximum)` of the integer formats `schemars` emits.
const INTEGER_FORMATS: [(&str, i128, i128); 12] = [
    ("int8", i8::MIN as i128, i8::MAX as i128),
    ("int16", i16::MIN as i128, i16::MAX as i128),
    ("int32", i32::MIN as i128, i32::MAX as i128),
    ("int64", i64::MIN as i128, i64::MAX as i128),
    ("int", i64::MIN as i128, i64::MAX as i128),
    ("uint8", 0, u8::MAX as i128),
    ("uint16", 0, u16::MAX as i128),
    ("uint32", 0, u32::MAX as i128),
    ("uint64", 0, u64::MAX as i128),
    ("uint", 0, u64::MAX as i128),
    ("int128", i128::MIN, i128::MAX),
    ("uint128", 0, i128::MAX),
];
/// Formats of numbers that every JSON number satisfies.
const NUMBER_FORMATS: [&str; 2] = ["float", "double"];

/// A compiled argument check. Cheap to share behind an `Arc`; a valid value is cleared without building
/// paths.
///
/// ```
/// use dsh_tools::schema::arguments::ArgumentCheck;
/// use serde_json::json;
///
/// let check = ArgumentCheck::new(&json!({
///     "type": "object",
///     "properties": { "limit": { "type": "integer", "minimum": 1, "maximum": 20 } },
///     "required": ["limit"],
/// }))?;
/// assert!(check.check(&json!({ "limit": 5 })).is_ok());
/// let failure = check.check(&json!({ "limit": 50 })).unwrap_err();
/// assert_eq!(failure.message, r#"invalid arguments: "limit" is greater than the maximum of 20"#);
/// assert_eq!(check.check(&json!({})).unwrap_err().message, r#"invalid arguments: missing required property "limit""#);
/// # Ok::<(), dsh_tools::schema::arguments::ArgumentCheckError>(())
/// ```
pub struct ArgumentCheck {
    validator: jsonschema::Validator,
}

impl fmt::Debug for ArgumentCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgumentCheck").finish_non_exhaustive()
    }
}

/// A schema whose argument check cannot be built: where, and why (an unknown `format`, an invalid
/// `pattern`, a schema the JSON Schema meta-schema rejects, a non-local `$ref`, too deep a schema).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentCheckError {
    /// The schema location, as a JSON pointer into the schema (`/properties/when/format`); empty for the
    /// root.
    pub path: String,
    /// Why the check cannot be built.
    pub reason: String,
}

impl fmt::Display for ArgumentCheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() { "the schema root" } else { &self.path };
        write!(f, "cannot check arguments against the schema at {at}: {}", self.reason)
    }
}

impl std::error::Error for ArgumentCheckError {}

impl ArgumentCheck {
    /// Compile the check for `schema` (any JSON Schema draft `jsonschema` knows; `$schema` selects it,
    /// 2020-12 when absent). Only local references resolve.
    pub fn new(schema: &Value) -> Result<Self, ArgumentCheckError> {
        if let Some(path) = deeper_than(schema, super::lower::MAX_DEPTH) {
            let reason = format!("the schema nests deeper than {} levels", super::lower::MAX_DEPTH);
            return Err(ArgumentCheckError { path, reason });
        }
        let mut schema = schema.clone();
        let mut unknown = None;
        prepare(&mut schema, String::new(), &mut unknown);
        if let Some((path, format)) = unknown {
            let reason = format!("unknown format \"{format}\" cannot be enforced (drop it, or turn the argument check off)");
            return Err(ArgumentCheckError { path, reason });
        }
        let mut options = jsonschema::options().should_validate_formats(true).should_ignore_unknown_formats(false);
        for (format, ..) in INTEGER_FORMATS {
            options = options.with_format(format, |_: &str| true);
        }
        for format in NUMBER_FORMATS {
            options = options.with_format(format, |_: &str| true);
        }
        options = options.with_format("char", |s: &str| s.chars().count() == 1);
        options = options.with_format("ip", |s: &str| s.parse::<std::net::IpAddr>().is_ok());
        let validator = options
            .build(&schema)
            .map_err(|e| ArgumentCheckError { path: e.instance_path().as_str().to_owned(), reason: e.to_string() })?;
        Ok(Self { validator })
    }

    /// Every violation of `arguments`, each naming its path, in the validator's order; empty when valid.
    pub fn violations(&self, arguments: &Value) -> Vec<String> {
        if deeper_than(arguments, MAX_ARGUMENT_DEPTH).is_some() {
            return vec![format!("the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels")];
        }
        if self.validator.is_valid(arguments) {
            return Vec::new();
        }
        self.validator.iter_errors(arguments).map(|error| describe(&error)).collect()
    }

    /// `Ok` for valid arguments, else the `INVALID_ARGS` failure listing every violation.
    pub fn check(&self, arguments: &Value) -> Result<(), ToolFailure> {
        let violations = self.violations(arguments);
        if violations.is_empty() { Ok(()) } else { Err(ToolFailure::invalid_args(&violations)) }
    }
}

/// One violation: `missing required property "a.b"`, or `"a.b[0]" <what is wrong>` (`arguments` at the
/// root). The instance value itself is masked: the model sent it, and it may be long.
fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    let mut path = String::new();
    for segment in error.instance_path().segments() {
        match segment {
            jsonschema::paths::LocationSegment::Property(name) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&name);
            }
            jsonschema::paths::LocationSegment::Index(index) => path.push_str(&format!("[{index}]")),
        }
    }
    if let jsonschema::error::ValidationErrorKind::Required { property } = error.kind() {
        let name = property.as_str().map(str::to_owned).unwrap_or_else(|| property.to_string());
        let full = if path.is_empty() { name } else { format!("{path}.{name}") };
        return format!("missing required property \"{full}\"");
    }
    let placeholder = if path.is_empty() { "arguments".to_owned() } else { format!("\"{path}\"") };
    error.masked_with(placeholder).to_string()
}

/// The path (JSON pointer) of a node deeper than `limit`, found without recursion.
fn deeper_than(value: &Value, limit: usize) -> Option<String> {
    let mut stack = vec![(value, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > limit {
            return Some(String::new());
        }
        match node {
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    None
}

/// Make the keywords `jsonschema` would not enforce enforceable (integer formats become bounds,
/// `nullable` a type list), noting the first unknown format. The schema is at most `MAX_DEPTH` deep here.
fn prepare(node: &mut Value, path: String, unknown: &mut Option<(String, String)>) {
    match node {
        Value::Object(map) => {
            rewrite(map, &path, unknown);
            for (key, child) in map.iter_mut() {
                prepare(child, format!("{path}/{}", key.replace('~', "~0").replace('/', "~1")), unknown);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter_mut().enumerate() {
                prepare(child, format!("{path}/{index}"), unknown);
            }
        }
        _ => {}
    }
}

fn rewrite(map: &mut Map<String, Value>, path: &str, unknown: &mut Option<(String, String)>) {
    if map.get("nullable") == Some(&Value::Bool(true))
        && let Some(Value::String(ty)) = map.get("type")
    {
        let types = Value::Array(vec![Value::String(ty.clone()), Value::String("null".into())]);
        map.insert("type".into(), types);
    }
    let Some(Value::String(format)) = map.get("format") else { return };
    if let Some(&(_, min, max)) = INTEGER_FORMATS.iter().find(|(name, ..)| name == format) {
        tighten(map, "minimum", min, |new, old| new > old);
        tighten(map, "maximum", max, |new, old| new < old);
    } else if !NUMBER_FORMATS.contains(&format.as_str()) && !matches!(format.as_str(), "char" | "ip") && !known_format(format) && unknown.is_none() {
        *unknown = Some((format!("{path}/format"), format.clone()));
    }
}

/// Set `keyword` to `bound` unless the schema already holds a tighter one (bounds beyond 64 bits are
/// left out: `serde_json` holds no such integer).
fn tighten(map: &mut Map<String, Value>, keyword: &str, bound: i128, tighter: fn(f64, f64) -> bool) {
    let bound = match (i64::try_from(bound), u64::try_from(bound)) {
        (Ok(b), _) => Value::from(b),
        (_, Ok(b)) => Value::from(b),
        _ => return,
    };
    let keep = map.get(keyword).and_then(Value::as_f64).zip(bound.as_f64()).is_some_and(|(old, new)| !tighter(new, old));
    if !keep {
        map.insert(keyword.into(), bound);
    }
}

/// The formats `jsonschema` asserts itself.
fn known_format(format: &str) -> bool {
    matches!(
        format,
        "date" | "date-time" | "duration" | "email" | "hostname" | "idn-email" | "idn-hostname" | "ipv4" | "ipv6"
            | "iri" | "iri-reference" | "json-pointer" | "regex" | "relative-json-pointer" | "time" | "uri"
            | "uri-reference" | "uri-template" | "uuid"
    )
}

#[cfg(test)]
#[path = "arguments_tests.rs"]
mod tests;
