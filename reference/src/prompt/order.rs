//! Tool order in an assembly (upstream `orderTools` and the load-time `toolOrder` check): JavaScript's
//! string order by default, or the configured `toolOrder` with its rest entry, with upstream's messages
//! for a duplicate name, a missing rest entry, an unregistered name and the reserved rest name.
//!
//! Spec: PROMPT-003..PROMPT-007.

use std::collections::HashSet;

use super::{PromptError, TOOL_ORDER_REST};
use crate::definition::ToolSchema;

/// Upstream's load-time `toolOrder` check: no name twice, and the rest entry present.
pub(super) fn validate_tool_order(tool_order: &[String]) -> Result<(), PromptError> {
    let mut seen = HashSet::new();
    for name in tool_order {
        if !seen.insert(name.as_str()) {
            return Err(PromptError::new(format!("toolOrder lists \"{name}\" more than once")));
        }
    }
    if !seen.contains(TOOL_ORDER_REST) {
        return Err(PromptError::new(format!(
            "toolOrder must contain the \"{TOOL_ORDER_REST}\" rest entry (where unlisted tools are inserted)"
        )));
    }
    Ok(())
}

/// JavaScript's default string order (UTF-16 code units).
fn cmp_js(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Upstream `orderTools`: the reserved name is rejected; without a configured order, lexicographic;
/// with one, every listed name must be known, listed tools take their position and the rest are inserted
/// lexicographically at the rest entry.
pub(super) fn order_tools(
    mut tools: Vec<ToolSchema>,
    tool_order: Option<&[String]>,
    known: &[String],
) -> Result<Vec<ToolSchema>, PromptError> {
    if tools.iter().any(|t| t.name == TOOL_ORDER_REST) {
        return Err(PromptError::new(format!(
            "tool provider returned reserved tool name \"{TOOL_ORDER_REST}\" (reserved for toolOrder's rest entry)"
        )));
    }
    // A stable sort, as `Array.prototype.sort` is.
    tools.sort_by(|a, b| cmp_js(&a.name, &b.name));
    let Some(tool_order) = tool_order else { return Ok(tools) };
    let known_set: HashSet<&str> = known.iter().map(String::as_str).collect();
    let unknown: Vec<&String> =
        tool_order.iter().filter(|n| n.as_str() != TOOL_ORDER_REST && !known_set.contains(n.as_str())).collect();
    if !unknown.is_empty() {
        let mut sorted: Vec<&str> = known_set.into_iter().collect();
        sorted.sort_by(|a, b| cmp_js(a, b));
        let listed = unknown.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
        let known_text = if sorted.is_empty() { "(none)".to_owned() } else { sorted.join(", ") };
        return Err(PromptError::new(format!(
            "toolOrder lists unregistered tool{} {listed}; known tools: {known_text}",
            if unknown.len() > 1 { "s" } else { "" }
        )));
    }
    let listed: HashSet<&str> = tool_order.iter().map(String::as_str).collect();
    let mut ordered = Vec::with_capacity(tools.len());
    for name in tool_order {
        if name == TOOL_ORDER_REST {
            ordered.extend(tools.iter().filter(|t| !listed.contains(t.name.as_str())).cloned());
        } else {
            ordered.extend(tools.iter().filter(|t| &t.name == name).cloned());
        }
    }
    Ok(ordered)
}
