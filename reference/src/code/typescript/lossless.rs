//! The lossless-JSON boundary between the program and the host, walked from outside the engine (upstream
//! `snapshotCodeJsonValue` in the worker, `decodeWorkerJson` on the host): a program value crosses only
//! when JSON can carry it exactly. Rejected: `undefined` (anywhere, including a missing argument), functions,
//! symbols, BigInt, NaN, infinities, `-0`, cycles (repeated non-cyclic references are fine), sparse arrays
//! or arrays with extra own keys, objects whose prototype is neither `Object.prototype` nor `null` (Map,
//! Date, class instances, errors, boxed primitives, typed arrays), non-enumerable or symbol own keys, and
//! every Proxy. Getters are read, as upstream reads `source[key]`. Prototypes are compared against the
//! intrinsics captured before the program ran, so a program cannot forge them by mutating globals.
//!
//! Both walks use explicit stacks: a value nested 100,000 levels deep neither overflows the Rust stack nor
//! the engine's.
//!
//! Spec: RUN-007 (binding arguments), RUN-023 (the completion), RUN-055 (overwritten globals and spoofed
//! prototypes do not change what crosses).

use std::collections::HashSet;

use rquickjs::object::Property;
use rquickjs::{Array, Ctx, Filter, Object, Value as JsValue};
use serde_json::{Number, Value};

// Arena nodes and their child slots: the value is rebuilt bottom-up by `value::assemble_from`.
use crate::value::{Shape as Node, Slot};

/// The intrinsics the walker compares prototypes with, captured before the program runs.
#[derive(Clone)]
pub(crate) struct Intrinsics<'js> {
    pub(crate) object_prototype: Object<'js>,
    pub(crate) array_prototype: Object<'js>,
}

impl<'js> Intrinsics<'js> {
    pub(crate) fn capture(ctx: &Ctx<'js>) -> rquickjs::Result<Self> {
        let globals = ctx.globals();
        let object: Object<'js> = globals.get("Object")?;
        let array: Object<'js> = globals.get("Array")?;
        Ok(Self { object_prototype: object.get("prototype")?, array_prototype: array.get("prototype")? })
    }
}

/// Where a visited value goes.
#[derive(Clone, Copy)]
enum Dest {
    Root,
    Array(usize),
    Object(usize),
}

enum Task<'js> {
    Visit(JsValue<'js>, Dest, Option<String>),
    Leave(JsValue<'js>),
}

/// The JSON number a finite, non-negative-zero double stands for: integers within 2^53 as integers.
fn json_number(f: f64) -> Option<Number> {
    if !f.is_finite() || (f == 0.0 && f.is_sign_negative()) {
        return None;
    }
    if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
        #[allow(clippy::cast_possible_truncation)]
        return Some(Number::from(f as i64));
    }
    Number::from_f64(f)
}

fn same_object<'js>(a: &Option<Object<'js>>, b: &Object<'js>) -> bool {
    a.as_ref().is_some_and(|a| a.as_value() == b.as_value())
}

/// How many values a snapshot visits between two checks of `stop`.
const STOP_CHECK_EVERY: usize = 1024;

/// Snapshot `value` as lossless JSON, or `None` when any part of it is not (upstream's `undefined`
/// snapshot). An engine error while reading (a throwing getter, an interrupt) also yields `None`, and so
/// does `stop()` returning `true` (checked every [`STOP_CHECK_EVERY`] values: walking a large value is host
/// work the engine's interrupt handler does not see, so the run's limits are checked here).
pub(crate) fn snapshot<'js>(
    ctx: &Ctx<'js>,
    value: JsValue<'js>,
    intrinsics: &Intrinsics<'js>,
    stop: &dyn Fn() -> bool,
) -> Option<Value> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut root: Option<Slot> = None;
    let mut active: HashSet<JsValue<'js>> = HashSet::new();
    let mut tasks: Vec<Task<'js>> = vec![Task::Visit(value, Dest::Root, None)];
    let mut visited = 0usize;
    while let Some(task) = tasks.pop() {
        visited += 1;
        if visited % STOP_CHECK_EVERY == 0 && stop() {
            return None;
        }
        let (value, dest, key) = match task {
            Task::Leave(object) => {
                active.remove(&object);
                continue;
            }
            Task::Visit(value, dest, key) => (value, dest, key),
        };
        let slot = if value.is_null() {
            Slot::Leaf(Value::Null)
        } else if let Some(b) = value.as_bool() {
            Slot::Leaf(Value::Bool(b))
        } else if let Some(i) = value.as_int() {
            Slot::Leaf(Value::Number(Number::from(i)))
        } else if let Some(f) = value.as_float() {
            Slot::Leaf(Value::Number(json_number(f)?))
        } else if let Some(s) = value.as_string() {
            // A lone surrogate cannot be carried by a Rust string: rejected (upstream lets it through).
            Slot::Leaf(Value::String(s.to_string().ok()?))
        } else if value.is_object() {
            if value.is_proxy() || value.is_function() || active.contains(&value) {
                return None;
            }
            let object = value.as_object()?.clone();
            let prototype = object.get_prototype();
            let index = nodes.len();
            if value.is_array() {
                if !same_object(&prototype, &intrinsics.array_prototype) {
                    return None;
                }
                let array = value.as_array()?.clone();
                let length = array.len();
                let keys: Vec<String> =
                    object.own_keys::<String>(Filter::new().string().symbol()).collect::<rquickjs::Result<_>>().ok()?;
                if keys.len() != length + 1 {
                    return None;
                }
                // Own keys come back as the indices ascending, then `length`: anything else is a hole
                // or an extra key.
                for (i, key) in keys.iter().take(length).enumerate() {
                    if key.parse::<usize>().ok() != Some(i) || (i > 0 && key.starts_with('0')) {
                        return None;
                    }
                }
                nodes.push(Node::Array(Vec::with_capacity(length)));
                active.insert(value.clone());
                tasks.push(Task::Leave(value.clone()));
                for i in (0..length).rev() {
                    let item: JsValue<'js> = array.get(i).ok()?;
                    tasks.push(Task::Visit(item, Dest::Array(index), None));
                }
            } else {
                if prototype.is_some() && !same_object(&prototype, &intrinsics.object_prototype) {
                    return None;
                }
                let all = object.own_keys::<rquickjs::Atom>(Filter::new().string().symbol()).count();
                let keys: Vec<String> = object
                    .own_keys::<String>(Filter::new().string().enum_only())
                    .collect::<rquickjs::Result<_>>()
                    .ok()?;
                if keys.len() != all {
                    return None;
                }
                nodes.push(Node::Object(Vec::with_capacity(keys.len())));
                active.insert(value.clone());
                tasks.push(Task::Leave(value.clone()));
                // Read in key order (getters run in the order upstream runs them), then visit in order.
                let mut items = Vec::with_capacity(keys.len());
                for key in keys {
                    let item: JsValue<'js> = object.get(key.as_str()).ok()?;
                    items.push((key, item));
                }
                for (key, item) in items.into_iter().rev() {
                    tasks.push(Task::Visit(item, Dest::Object(index), Some(key)));
                }
            }
            Slot::Node(index)
        } else {
            // undefined, symbols, BigInt, anything else.
            return None;
        };
        match dest {
            Dest::Root => root = Some(slot),
            Dest::Array(parent) => {
                if let Some(Node::Array(items)) = nodes.get_mut(parent) {
                    items.push(slot);
                }
            }
            Dest::Object(parent) => {
                if let Some(Node::Object(fields)) = nodes.get_mut(parent) {
                    fields.push((key.unwrap_or_default(), slot));
                }
            }
        }
    }
    let _ = ctx;
    Some(crate::value::assemble_from(root?, nodes))
}


enum Build<'a, 'js> {
    Array(Array<'js>, std::iter::Enumerate<std::slice::Iter<'a, Value>>),
    Object(Object<'js>, serde_json::map::Iter<'a>),
}

fn make<'a, 'js>(ctx: &Ctx<'js>, value: &'a Value) -> rquickjs::Result<(JsValue<'js>, Option<Build<'a, 'js>>)> {
    Ok(match value {
        Value::Null => (JsValue::new_null(ctx.clone()), None),
        Value::Bool(b) => (JsValue::new_bool(ctx.clone(), *b), None),
        Value::Number(n) => {
            let js = match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
                Some(i) => JsValue::new_int(ctx.clone(), i),
                None => JsValue::new_number(ctx.clone(), n.as_f64().unwrap_or(f64::NAN)),
            };
            (js, None)
        }
        Value::String(s) => (rquickjs::String::from_str(ctx.clone(), s)?.into_value(), None),
        Value::Array(items) => {
            let array = Array::new(ctx.clone())?;
            (array.clone().into_value(), Some(Build::Array(array, items.iter().enumerate())))
        }
        Value::Object(map) => {
            let object = Object::new(ctx.clone())?;
            (object.clone().into_value(), Some(Build::Object(object, map.iter())))
        }
    })
}

/// Materialize a JSON value in the engine (as ordinary data properties: a `__proto__` key stays a key).
pub(crate) fn to_js<'js>(ctx: &Ctx<'js>, value: &Value) -> rquickjs::Result<JsValue<'js>> {
    let (root, frame) = make(ctx, value)?;
    let mut stack: Vec<Build<'_, 'js>> = frame.into_iter().collect();
    while let Some(top) = stack.last_mut() {
        let next = match top {
            Build::Array(array, items) => match items.next() {
                Some((i, item)) => {
                    let (js, frame) = make(ctx, item)?;
                    array.set(i, js)?;
                    frame
                }
                None => {
                    stack.pop();
                    continue;
                }
            },
            Build::Object(object, fields) => match fields.next() {
                Some((key, item)) => {
                    let (js, frame) = make(ctx, item)?;
                    object.prop(key.as_str(), Property::from(js).writable().enumerable().configurable())?;
                    frame
                }
                None => {
                    stack.pop();
                    continue;
                }
            },
        };
        stack.extend(next);
    }
    Ok(root)
}
