//! The quick verdict: whether a value has no violation at all under a compiled [`Plan`], without building a
//! path, a frame or a message. Most values a pipeline validates are valid, so this pass settles them, and
//! only a value it cannot clear goes through the diagnostic walk ([`super::walk`]), which alone decides
//! what is reported.
//!
//! The pass recurses, so it stops at [`MAX_DEPTH`] levels and answers "unknown" (the walk, which keeps an
//! explicit stack, takes over): a 100,000-level value never deepens the native stack by more than
//! `MAX_DEPTH` frames. It must never clear a value the walk would report against; it mirrors the walk's
//! rules one by one, and the unit tests compare the two over generated schemas and values.
//!
//! Spec: ARG-009..ARG-014, OUT-003, SCHEMA-004, SCHEMA-008, SCHEMA-009, SCHEMA-011, SCHEMA-018, SCHEMA-027..SCHEMA-031, SCHEMA-033.

use serde_json::Value;

use super::plan::{Held, Node, Plan, Prop, Scalar};
use super::{has_negative_zero, lookup, same_key, scalar_fits};
use crate::value::js_scalar_eq;

/// How deep the quick pass recurses before it leaves the value to the walk.
pub(super) const MAX_DEPTH: u32 = 128;

/// `Some(true)` when `value` has no violation under `plan`, `Some(false)` when it has one, `None` when it
/// is deeper than [`MAX_DEPTH`] (the walk decides).
pub(super) fn verdict(plan: &Plan<'_>, value: &Value) -> Option<bool> {
    let mut check = Check { plan, too_deep: false };
    let valid = check.valid(0, value, 0);
    if check.too_deep { None } else { Some(valid) }
}

struct Check<'p, 'a> {
    plan: &'p Plan<'a>,
    /// Set when a level beyond [`MAX_DEPTH`] was reached: every answer since may be wrong (a `oneOf` counts
    /// its branches), so the verdict as a whole is unknown.
    too_deep: bool,
}

impl Check<'_, '_> {
    fn valid(&mut self, node: usize, value: &Value, depth: u32) -> bool {
        if depth > MAX_DEPTH {
            self.too_deep = true;
            return false;
        }
        let plan = self.plan;
        let Some(node) = plan.nodes.get(node) else { return true };
        match *node {
            Node::Any => !has_negative_zero(value),
            Node::Todo(_) => true,
            Node::Invalid => false,
            Node::Scalar { ty, allowed, constant } => self.scalar(ty, allowed, constant, value),
            Node::Array { items } => {
                let Value::Array(values) = value else { return false };
                match items {
                    None => !values.iter().any(has_negative_zero),
                    Some(item) => values.iter().all(|v| self.child(item, v, depth)),
                }
            }
            Node::Object { properties, required, closed, all_required_declared } => {
                let Value::Object(object) = value else { return false };
                if !all_required_declared
                    && !plan.required(required).iter().filter_map(Value::as_str).all(|key| lookup(object, key).is_some())
                {
                    return false;
                }
                let declared = plan.properties(properties);
                // Members usually come in the schema's order: try the next one before searching.
                let mut members = object.iter();
                let mut found = 0;
                for &Prop { name, node, required } in declared {
                    let name = plan.name(name);
                    let member = match members.next() {
                        Some((key, member)) if same_key(key, name) => Some(member),
                        _ => lookup(object, name),
                    };
                    match member {
                        Some(member) => {
                            found += 1;
                            if !self.child(node, member, depth) {
                                return false;
                            }
                        }
                        None if required => return false,
                        None => {}
                    }
                }
                if found == object.len() {
                    return true;
                }
                // Undeclared members: none allowed when closed; otherwise each must be lossless JSON.
                !closed
                    && !object.iter().any(|(k, v)| {
                        !declared.iter().any(|d| same_key(plan.name(d.name), k)) && has_negative_zero(v)
                    })
            }
            Node::OneOf { branches } => {
                let mut matched = 0;
                for branch in branches.range() {
                    if self.valid(branch, value, depth + 1) {
                        matched += 1;
                    }
                }
                matched == 1
            }
        }
    }

    /// A child one level below `depth`: a scalar node (the common leaf) is settled here, without a call.
    #[inline]
    fn child(&mut self, node: usize, value: &Value, depth: u32) -> bool {
        match self.plan.nodes.get(node) {
            Some(&Node::Scalar { ty, allowed, constant }) => self.scalar(ty, allowed, constant, value),
            _ => self.valid(node, value, depth + 1),
        }
    }

    /// A scalar node: the type, then `enum`, then `const`.
    #[inline]
    fn scalar(&self, ty: Scalar, allowed: Option<Held<'_>>, constant: Option<Held<'_>>, value: &Value) -> bool {
        let plan = self.plan;
        scalar_fits(ty, value)
            && allowed.is_none_or(|allowed| match plan.value(allowed) {
                Value::Array(entries) => listed(entries, value),
                _ => false,
            })
            && constant.is_none_or(|expected| js_scalar_eq(plan.value(expected), value))
    }
}

/// Whether a scalar is one of `entries` (`Array.prototype.includes`); strings compared without a call.
fn listed(entries: &[Value], value: &Value) -> bool {
    match value {
        Value::String(s) => entries.iter().any(|e| matches!(e, Value::String(x) if same_key(x, s))),
        _ => entries.iter().any(|e| js_scalar_eq(e, value)),
    }
}
