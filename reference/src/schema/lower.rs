//! Lowering real-world JSON Schemas (an MCP tool's `inputSchema`/`outputSchema`, `schemars` output) into
//! the subset the registry enforces ([`super::check`], rules SCHEMA-019..SCHEMA-026): every keyword the
//! subset lacks is dropped or rewritten, and each such change is reported, so a tool keeps a precise
//! schema instead of being rejected or degraded whole.
//!
//! What happens to each keyword:
//! - kept: `type` (one string), `properties`, `required`, `additionalProperties` (boolean), `items`
//!   (one schema), scalar `enum`/`const`, `oneOf`, and the annotations `description`, `title`,
//!   `default`, `examples` (when they are valid for the subset);
//! - dropped, widening what is accepted: value constraints the subset has no word for (`minimum`,
//!   `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minLength`, `maxLength`,
//!   `pattern`, `format`, `minItems`, `maxItems`, `uniqueItems`, `patternProperties`, `not`,
//!   `if`/`then`/`else`, …), the document keywords `$schema`, `$id`, `$defs`, `definitions`, `$comment`,
//!   and any keyword the subset does not know;
//! - rewritten: `type: [T, "null"]` and other type lists into a `oneOf` of one branch per type (the
//!   subset has no nullable form), OpenAPI's `nullable: true` likewise; `anyOf` into `oneOf` when its
//!   branches provably never overlap (else dropped); `allOf` and a `$ref` with sibling keywords merged
//!   into one schema; local `$ref`s (`#/$defs/…`, `#/definitions/…`, any `#/…` pointer) inlined; a
//!   missing `type` inferred from `enum`/`const` values or object/array keywords; keywords beside a
//!   `oneOf` moved into each branch; a schema-valued `additionalProperties` widened to `true`.
//!
//! A schema that cannot be lowered — a reference cycle, a non-local reference, a schema that accepts
//! nothing — fails with a [`LowerError`] naming the path and keyword. Lowering recurses, bounded by
//! [`MAX_DEPTH`] levels and [`MAX_NODES`] produced schema nodes (inlining can multiply a schema).

mod merge;
mod typed;

use std::fmt;

use serde_json::{Map, Value};


/// Deepest schema nesting lowering follows before it fails.
pub const MAX_DEPTH: usize = 256;
/// Most schema nodes one lowering produces (after `$ref` inlining) before it fails.
pub const MAX_NODES: usize = 100_000;

const ANNOTATIONS: [&str; 4] = ["description", "title", "default", "examples"];

/// A schema lowered into the enforced subset, and every change made to get there.
#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    /// The lowered schema; it passes [`assert_supported_json_schema`](super::check::assert_supported_json_schema).
    pub schema: Value,
    /// Each keyword dropped or rewritten, in walk order.
    pub changes: Vec<LoweringChange>,
}

/// One keyword the lowering dropped or rewrote.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoweringChange {
    /// The schema node, in the registry's path style: `$`, `$.properties.x.items`, `$.anyOf[1]`.
    pub path: String,
    /// The keyword at that node (`format`, `type`, `$ref`, …).
    pub keyword: String,
    /// What was done to it.
    pub action: LoweringAction,
}

/// What the lowering did to a keyword.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LoweringAction {
    /// Removed; the lowered schema accepts at least what the original did, usually more.
    Dropped,
    /// Replaced by an equivalent or wider construction of the subset, described in `detail`.
    Rewritten {
        /// What it became, for a human reading the report.
        detail: String,
    },
}

impl fmt::Display for LoweringChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.action {
            LoweringAction::Dropped => write!(f, "{}: dropped `{}`", self.path, self.keyword),
            LoweringAction::Rewritten { detail } => write!(f, "{}: rewrote `{}`: {detail}", self.path, self.keyword),
        }
    }
}

/// A schema the lowering could not bring into the subset: the path and keyword it stopped at, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerError {
    /// The schema node, in the registry's path style (`$.properties.x`).
    pub path: String,
    /// The keyword that could not be lowered (`$ref`, `type`, …); empty for the node itself.
    pub keyword: String,
    /// Why.
    pub reason: String,
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.keyword.is_empty() {
            write!(f, "cannot lower JSON Schema at {}: {}", self.path, self.reason)
        } else {
            write!(f, "cannot lower JSON Schema keyword `{}` at {}: {}", self.keyword, self.path, self.reason)
        }
    }
}

impl std::error::Error for LowerError {}

/// Rewrites a real-world JSON Schema (MCP inputSchema, schemars output) into the subset the
/// registry enforces (see spec/rules/schema.yaml, reference/src/schema/check.rs), reporting each change.
///
/// ```
/// use dsh_tools::schema::lower::{LoweringAction, lower_json_schema};
/// use serde_json::json;
///
/// let lowered = lower_json_schema(&json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "type": "object",
///     "properties": { "limit": { "type": ["integer", "null"], "minimum": 1 } },
/// }))?;
/// assert_eq!(lowered.schema, json!({
///     "type": "object",
///     "properties": { "limit": { "oneOf": [{ "type": "integer" }, { "type": "null" }] } },
/// }));
/// assert!(lowered.changes.iter().any(|c| c.keyword == "minimum" && c.action == LoweringAction::Dropped));
/// dsh_tools::assert_supported_json_schema(&lowered.schema)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn lower_json_schema(schema: &Value) -> Result<Lowered, LowerError> {
    let mut lowerer = Lowerer { root: schema, changes: Vec::new(), refs: Vec::new(), nodes: 0, widened: 0 };
    let lowered = lowerer.node(schema, "$", 0)?;
    // A type list's branches drop the same keywords at the same node: report each change once.
    let mut seen = std::collections::HashSet::new();
    let mut changes = lowerer.changes;
    changes.retain(|change| seen.insert(change.clone()));
    Ok(Lowered { schema: lowered, changes })
}

struct Lowerer<'a> {
    root: &'a Value,
    changes: Vec<LoweringChange>,
    /// The `$ref`s being inlined, outermost first (a repeat is a cycle).
    refs: Vec<String>,
    nodes: usize,
    /// How many changes so far widened what a node accepts (a `oneOf` whose branches were widened may
    /// need to go: exactly-one is not monotone).
    widened: usize,
}

fn fail<T>(path: &str, keyword: &str, reason: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError { path: path.to_owned(), keyword: keyword.to_owned(), reason: reason.into() })
}

impl Lowerer<'_> {
    fn dropped(&mut self, path: &str, keyword: &str) {
        self.widened += 1;
        self.changes.push(LoweringChange { path: path.to_owned(), keyword: keyword.to_owned(), action: LoweringAction::Dropped });
    }

    /// A rewrite that accepts more than the original.
    fn widening(&mut self, path: &str, keyword: &str, detail: impl Into<String>) {
        self.widened += 1;
        self.rewritten(path, keyword, detail);
    }

    fn rewritten(&mut self, path: &str, keyword: &str, detail: impl Into<String>) {
        let action = LoweringAction::Rewritten { detail: detail.into() };
        self.changes.push(LoweringChange { path: path.to_owned(), keyword: keyword.to_owned(), action });
    }

    fn node(&mut self, schema: &Value, path: &str, depth: usize) -> Result<Value, LowerError> {
        if depth > MAX_DEPTH {
            return fail(path, "", format!("the schema nests deeper than {MAX_DEPTH} levels"));
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return fail(path, "", format!("the lowered schema would exceed {MAX_NODES} nodes (inlined references multiply it)"));
        }
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => {
                self.rewritten(path, "true", "the boolean schema `true` became `{}`");
                return Ok(Value::Object(Map::new()));
            }
            Value::Bool(false) => return fail(path, "", "the boolean schema `false` accepts nothing, which the subset cannot say"),
            _ => return fail(path, "", "a schema must be an object or a boolean"),
        };
        if let Some(reference) = map.get("$ref") {
            return self.reference(map, reference, path, depth);
        }
        if let Some(branches) = map.get("allOf") {
            return self.all_of(map, branches, path, depth);
        }
        if map.contains_key("oneOf") || map.contains_key("anyOf") {
            return self.combinator(map, path, depth);
        }
        let types = self.types(map, path)?;
        match types.as_slice() {
            [] => Ok(Value::Object(self.untyped(map, path))),
            [ty] => self.typed(map, ty, path, depth).map(Value::Object),
            _ => self.split_types(map, &types, path, depth),
        }
    }

    /// Inline a local `$ref`, conjoined with its sibling keywords.
    fn reference(&mut self, map: &Map<String, Value>, reference: &Value, path: &str, depth: usize) -> Result<Value, LowerError> {
        let Value::String(reference) = reference else { return fail(path, "$ref", "must be a string") };
        let Some(pointer) = merge::local_pointer(reference) else {
            return fail(path, "$ref", format!("\"{reference}\" is not a local reference (only `#/...` pointers can be inlined)"));
        };
        if self.refs.contains(reference) {
            let mut cycle = self.refs.clone();
            cycle.push(reference.clone());
            return fail(path, "$ref", format!("reference cycle {} cannot be inlined", cycle.join(" -> ")));
        }
        let Some(target) = self.root.pointer(&pointer) else {
            return fail(path, "$ref", format!("\"{reference}\" points at nothing in the document"));
        };
        self.refs.push(reference.clone());
        let inlined = self.node(target, path, depth + 1);
        self.refs.pop();
        let inlined = inlined?;
        self.rewritten(path, "$ref", format!("inlined \"{reference}\""));
        let mut siblings = map.clone();
        siblings.remove("$ref");
        for key in ["$defs", "definitions", "$schema", "$id", "$comment", "$anchor"] {
            if siblings.remove(key).is_some() {
                self.dropped(path, key);
            }
        }
        if siblings.is_empty() {
            return Ok(inlined);
        }
        let Value::Object(inlined) = inlined else { return Ok(inlined) };
        let conjoined = merge::conjoin(&inlined, &siblings).or_else(|(keyword, reason)| fail(path, &keyword, reason))?;
        self.node(&Value::Object(conjoined), path, depth + 1)
    }

    /// Merge every `allOf` branch (each lowered first) and the node's own keywords into one schema.
    fn all_of(&mut self, map: &Map<String, Value>, branches: &Value, path: &str, depth: usize) -> Result<Value, LowerError> {
        let Value::Array(branches) = branches else { return fail(path, "allOf", "must be an array of schemas") };
        let mut conjoined = map.clone();
        conjoined.remove("allOf");
        for (index, branch) in branches.iter().enumerate() {
            let lowered = self.node(branch, &format!("{path}.allOf[{index}]"), depth + 1)?;
            if let Value::Object(lowered) = lowered {
                conjoined = merge::conjoin(&conjoined, &lowered).or_else(|(keyword, reason)| fail(path, &keyword, reason))?;
            }
        }
        self.widening(path, "allOf", format!("merged its {} branch(es) into one schema", branches.len()));
        self.node(&Value::Object(conjoined), path, depth + 1)
    }

    /// `oneOf` kept, `anyOf` made a `oneOf` when sound; keywords beside it moved into each branch.
    fn combinator(&mut self, map: &Map<String, Value>, path: &str, depth: usize) -> Result<Value, LowerError> {
        let keyword = if map.contains_key("oneOf") { "oneOf" } else { "anyOf" };
        if keyword == "oneOf" && map.contains_key("anyOf") {
            self.dropped(path, "anyOf");
        }
        let Some(Value::Array(branches)) = map.get(keyword) else {
            return fail(path, keyword, "must be an array of schemas");
        };
        if branches.is_empty() {
            return fail(path, keyword, "an empty list accepts nothing");
        }
        let mut outer = Map::new();
        let mut shared = Map::new();
        let mut nullable = false;
        for (key, value) in map {
            match key.as_str() {
                "oneOf" | "anyOf" => {}
                "nullable" => nullable = value == &Value::Bool(true),
                k if ANNOTATIONS.contains(&k) => self.annotation(&mut outer, key, value, path),
                "$schema" | "$id" | "$defs" | "definitions" | "$comment" | "$anchor" => self.dropped(path, key),
                _ => {
                    shared.insert(key.clone(), value.clone());
                }
            }
        }
        if !shared.is_empty() {
            let names: Vec<&str> = shared.keys().map(String::as_str).collect();
            self.rewritten(path, keyword, format!("moved {} into each branch", names.join(", ")));
        }
        let widened_before = self.widened;
        let mut lowered = Vec::with_capacity(branches.len());
        for (index, branch) in branches.iter().enumerate() {
            let branch_path = format!("{path}.{keyword}[{index}]");
            let branch = match (branch, shared.is_empty()) {
                (Value::Object(b), false) => {
                    let conjoined = merge::conjoin(&shared, b).or_else(|(kw, reason)| fail(&branch_path, &kw, reason))?;
                    Value::Object(conjoined)
                }
                _ => branch.clone(),
            };
            lowered.push(self.node(&branch, &branch_path, depth + 1)?);
        }
        if map.contains_key("nullable") {
            let null = serde_json::json!({ "type": "null" });
            if nullable && !lowered.iter().any(|b| merge::may_overlap(b, &null)) {
                lowered.push(null);
                self.rewritten(path, "nullable", format!("became a {{\"type\": \"null\"}} {keyword} branch"));
            } else {
                self.dropped(path, "nullable");
            }
        }
        let overlapping = || (0..lowered.len()).any(|i| (i + 1..lowered.len()).any(|j| merge::may_overlap(&lowered[i], &lowered[j])));
        if keyword == "oneOf" && self.widened > widened_before && overlapping() {
            // Widened branches may now both accept a value the original accepted through exactly one.
            self.dropped(path, "oneOf");
            return Ok(Value::Object(outer));
        }
        if keyword == "anyOf" {
            let accepts_all = lowered.iter().any(|b| b.get("type").is_none() && b.get("oneOf").is_none());
            if accepts_all || overlapping() {
                self.dropped(path, "anyOf");
                return Ok(Value::Object(outer));
            }
            if lowered.len() > 1 {
                self.rewritten(path, "anyOf", "became oneOf (its branches never accept the same value)");
            }
        }
        if lowered.len() == 1 {
            if keyword == "oneOf" {
                self.rewritten(path, "oneOf", "its single branch was inlined (the subset needs two)");
            } else {
                self.rewritten(path, "anyOf", "its single branch was inlined");
            }
            let single = lowered.pop().unwrap_or_default();
            let Value::Object(single) = single else { return Ok(single) };
            let mut combined = single;
            for (key, value) in outer {
                combined.insert(key, value);
            }
            return Ok(Value::Object(combined));
        }
        let mut out = Map::new();
        out.insert("oneOf".into(), Value::Array(lowered));
        out.extend(outer);
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
#[path = "lower/tests.rs"]
mod tests;
