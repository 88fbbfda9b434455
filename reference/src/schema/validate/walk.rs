//! The diagnostic walk: every violation of a value against a compiled [`Plan`], path-qualified, in
//! upstream's walk order — per object: missing required properties, then declared properties in schema
//! order, then undeclared keys under `additionalProperties: false`; per array: items in order; `oneOf`
//! counts exactly-one matches. An explicit stack of small frames, so 100,000-level values are fine, and
//! diagnostic paths are interned only when a frame or a violation needs one.
//!
//! Spec: ARG-009..ARG-014, OUT-003, SCHEMA-004, SCHEMA-008, SCHEMA-009, SCHEMA-011, SCHEMA-018, SCHEMA-027..SCHEMA-031, SCHEMA-033.

use serde_json::{Map, Value};

use super::plan::{Node, Plan, Prop, Scalar};
use super::{has_negative_zero, lookup, same_key, scalar_fits};
use crate::schema::path::{PathId, Paths, ROOT, Seg};
use crate::value::{js_scalar_eq, js_stringify_shallow};

/// Every violation of `value` under `plan`, in upstream's order; `root` labels the root in diagnostics.
pub(super) fn violations<'a>(plan: &'a Plan<'_>, value: &'a Value, root: &'a str) -> Vec<String> {
    let mut paths = Paths::new(root);
    let mut out = Vec::new();
    let mut tails: Vec<String> = Vec::new();
    // Grown on demand: a scalar schema opens no frame.
    let mut frames: Vec<Frame<'_>> = Vec::new();
    if let Some(frame) = start(plan, 0, value, Place::ROOT, &mut paths, &mut out, &mut tails) {
        frames.push(frame);
    }
    while let Some(top) = frames.last_mut() {
        if top.branch_active {
            top.branch_active = false;
            if out.len() == top.mark as usize {
                top.matches += 1;
            }
            out.truncate(top.mark as usize);
        }
        if let Some((node, value, place)) = top.next_child(plan) {
            // The common leaf, a plain scalar of the right type, is settled here without a call.
            if let Some(Node::Scalar { ty, allowed: None, constant: None }) = plan.nodes.get(node)
                && scalar_fits(*ty, value)
                && !top.is_one_of()
            {
                continue;
            }
            if top.is_one_of() {
                top.branch_active = true;
                top.mark = index32(out.len());
            }
            if let Some(frame) = start(plan, node, value, place, &mut paths, &mut out, &mut tails) {
                frames.push(frame);
            }
            continue;
        }
        let Some(done) = frames.pop() else { break };
        if done.is_one_of() {
            if done.matches != 1 {
                out.push(format!(
                    "\"{}\" must match exactly one oneOf branch (matched {})",
                    paths.diagnostic(done.path),
                    done.matches
                ));
            }
        } else {
            out.extend(tails.drain(done.tail_start as usize..));
            if let Pending::Properties { declared, object, .. } = done.pending
                && done.lossless != NO_LOSSLESS
                && object.len() > done.found as usize
            {
                // Declared members were validated (a -0 there is already a violation); only undeclared ones
                // remain unchecked.
                let undeclared = object.iter().filter(|(k, _)| !declared.iter().any(|d| same_key(plan.name(d.name), k)));
                if out.len() == done.lossless as usize && undeclared.into_iter().any(|(_, v)| has_negative_zero(v)) {
                    out.push(format!("\"{}\" must be a lossless JSON object", paths.diagnostic(done.path)));
                }
            }
        }
    }
    out
}


/// The children still to visit under one container frame: a slice and a cursor, so a frame stays small
/// enough to push and pop without a `memcpy` call (the profile's largest cost before).
enum Pending<'a> {
    /// Declared properties of an object node, matched against the value's keys.
    Properties { declared: &'a [Prop<'a>], next: u32, object: &'a Map<String, Value> },
    /// Array items under one item node.
    Items { node: usize, items: &'a [Value], next: u32 },
    /// `oneOf` branches (consecutive nodes) over the same value.
    Branches { branches: std::ops::Range<usize>, value: &'a Value },
}

/// No lossless check pending for this frame.
const NO_LOSSLESS: u32 = u32::MAX;

/// One open container. Violations go straight to the shared output; a `oneOf` frame marks where the current
/// branch's output starts, counts a match when the branch added nothing, and truncates it away.
struct Frame<'a> {
    pending: Pending<'a>,
    path: PathId,
    /// Where this frame's `additionalProperties: false` violations start on the shared tail stack; they are
    /// reported after the children.
    tail_start: u32,
    mark: u32,
    matches: u32,
    /// For an object: the output length before its own violations (or [`NO_LOSSLESS`]); when nothing was
    /// reported, its undeclared members must still be lossless JSON.
    lossless: u32,
    /// How many declared properties the object value holds (when it holds nothing else, it has no
    /// undeclared member left to check).
    found: u32,
    branch_active: bool,
}

impl<'a> Frame<'a> {
    fn new(pending: Pending<'a>, tail_start: usize, path: PathId) -> Self {
        Self {
            pending,
            path,
            tail_start: index32(tail_start),
            mark: 0,
            matches: 0,
            lossless: NO_LOSSLESS,
            found: 0,
            branch_active: false,
        }
    }

    fn is_one_of(&self) -> bool {
        matches!(self.pending, Pending::Branches { .. })
    }

    /// The next (node, value, place) to visit.
    fn next_child(&mut self, plan: &'a Plan<'_>) -> Option<(usize, &'a Value, Place<'a>)> {
        match &mut self.pending {
            Pending::Properties { declared, next, object } => {
                while let Some(Prop { name, node, .. }) = declared.get(*next as usize) {
                    *next += 1;
                    let name = plan.name(*name);
                    if let Some(v) = lookup(object, name) {
                        self.found += 1;
                        return Some((*node, v, Place { parent: self.path, seg: Some(Seg::Key(name)) }));
                    }
                }
                None
            }
            Pending::Items { node, items, next } => {
                let i = *next as usize;
                let v = items.get(i)?;
                *next += 1;
                Some((*node, v, Place { parent: self.path, seg: Some(Seg::Index(i)) }))
            }
            Pending::Branches { branches, value } => {
                let b = branches.next()?;
                Some((b, *value, Place { parent: self.path, seg: None }))
            }
        }
    }
}

/// Where a child sits: its parent's path and its own step, interned in the path arena only when a frame or a
/// violation needs it (most scalar members need neither).
#[derive(Clone, Copy)]
struct Place<'a> {
    parent: PathId,
    seg: Option<Seg<'a>>,
}

impl<'a> Place<'a> {
    const ROOT: Self = Self { parent: ROOT, seg: None };

    fn id(self, paths: &mut Paths<'a>) -> PathId {
        match self.seg {
            Some(seg) => paths.push(self.parent, seg),
            None => self.parent,
        }
    }
}

/// A count or offset as a frame field: saturates (no value or output is anywhere near 4 G entries).
fn index32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX - 1)
}

/// Report one violation at `place` and open no frame.
fn one<'a>(paths: &mut Paths<'a>, place: Place<'a>, what: &str, out: &mut Vec<String>) -> Option<Frame<'a>> {
    let path = place.id(paths);
    out.push(format!("\"{}\" {what}", paths.diagnostic(path)));
    None
}

fn start<'a>(
    plan: &'a Plan<'_>,
    node: usize,
    value: &'a Value,
    place: Place<'a>,
    paths: &mut Paths<'a>,
    out: &mut Vec<String>,
    tails: &mut Vec<String>,
) -> Option<Frame<'a>> {
    match plan.nodes.get(node)? {
        Node::Any if has_negative_zero(value) => one(paths, place, "must be a lossless JSON value", out),
        Node::Any | Node::Todo(_) => None,
        Node::Invalid => one(paths, place, "must be a lossless JSON value", out),
        Node::OneOf { branches } => {
            Some(Frame::new(Pending::Branches { branches: branches.range(), value }, tails.len(), place.id(paths)))
        }
        Node::Object { properties, required, closed, .. } => {
            let Value::Object(object) = value else { return one(paths, place, "must be an object", out) };
            let properties = plan.properties(*properties);
            let path = place.id(paths);
            let start_len = out.len();
            for key in plan.required(*required).iter().filter_map(Value::as_str) {
                if lookup(object, key).is_none() {
                    let p = paths.push(path, Seg::Key(key));
                    out.push(format!("missing required property \"{}\"", paths.render(p)));
                }
            }
            let tail_start = tails.len();
            if *closed {
                for key in object.keys() {
                    if !properties.iter().any(|declared| same_key(plan.name(declared.name), key)) {
                        let p = paths.push(path, Seg::Key(key));
                        tails.push(format!(
                            "\"{}\" is not a declared property (additionalProperties: false)",
                            paths.render(p)
                        ));
                    }
                }
            }
            let mut frame = Frame::new(Pending::Properties { declared: properties, next: 0, object }, tail_start, path);
            frame.lossless = index32(start_len);
            Some(frame)
        }
        Node::Array { items } => {
            let Value::Array(values) = value else { return one(paths, place, "must be an array", out) };
            if items.is_none() && values.iter().any(has_negative_zero) {
                return one(paths, place, "must be a dense lossless JSON array", out);
            }
            items.map(|node| Frame::new(Pending::Items { node, items: values, next: 0 }, tails.len(), place.id(paths)))
        }
        Node::Scalar { ty, allowed, constant } => {
            if !scalar_fits(*ty, value) {
                if matches!((ty, value), (Scalar::Number, Value::Number(_))) {
                    return one(paths, place, "must be a finite JSON number", out);
                }
                let what = match ty {
                    Scalar::String => "must be a string",
                    Scalar::Number => "must be a number",
                    Scalar::Integer => "must be an integer",
                    Scalar::Boolean => "must be a boolean",
                    Scalar::Null => "must be null",
                };
                return one(paths, place, what, out);
            }
            if let Some(allowed) = allowed.map(|held| plan.value(held)) {
                let listed = match allowed {
                    Value::Array(entries) => entries.iter().any(|e| js_scalar_eq(e, value)),
                    _ => false,
                };
                if !listed {
                    let path = place.id(paths);
                    out.push(format!("\"{}\" must be one of {}", paths.diagnostic(path), js_stringify_shallow(allowed)));
                    return None;
                }
            }
            if let Some(expected) = constant.map(|held| plan.value(held)) {
                if !js_scalar_eq(expected, value) {
                    let path = place.id(paths);
                    out.push(format!("\"{}\" must be {}", paths.diagnostic(path), js_stringify_shallow(expected)));
                }
            }
            None
        }
    }
}

