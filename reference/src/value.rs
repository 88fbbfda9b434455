//! JSON value helpers that mirror JavaScript semantics where upstream's observable strings depend on them:
//! number predicates and formatting (`JSON.stringify`), property order of a lossless snapshot
//! (array-index keys first), and stack-safe clone / drop of arbitrarily deep values.
//!
//! Every walk here uses an explicit work stack: `serde_json::Value`'s own `clone`, `drop`, `==` and
//! `Debug` recurse and overflow on values 100,000 levels deep.
//!
//! Spec: ARG-001, ARG-002, OUT-004, OUT-010, OUT-011, OUT-014.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

/// The number as JavaScript sees it (an IEEE double).
pub(crate) fn js_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

/// Lossless finite JSON number, excluding negative zero (upstream `isJsonNumber`).
pub(crate) fn is_json_number(n: &Number) -> bool {
    if n.is_i64() || n.is_u64() {
        return true;
    }
    let f = js_f64(n);
    f.is_finite() && !(f == 0.0 && f.is_sign_negative())
}

/// `Number.isInteger` over a lossless JSON number.
pub(crate) fn is_json_integer(n: &Number) -> bool {
    if n.is_i64() || n.is_u64() {
        return true;
    }
    let f = js_f64(n);
    is_json_number(n) && f.fract() == 0.0
}

/// Scalar equality as JavaScript's `===` / `Array.prototype.includes` see it for JSON scalars.
/// Containers never compare equal (identity in JavaScript).
pub(crate) fn js_scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => js_f64(x) == js_f64(y),
        _ => false,
    }
}

/// Format a double the way JavaScript's `Number.prototype.toString` (and `JSON.stringify`) does.
pub(crate) fn js_number_string(f: f64) -> String {
    let mut out = String::new();
    push_js_number(&mut out, f);
    out
}

/// `Number.prototype.toString()` (radix 10) for a finite double; non-finite values print as JS does.
pub(crate) fn push_js_number(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x == 0.0 {
        out.push('0');
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    let mut buffer = ryu::Buffer::new();
    let shortest = buffer.format_finite(x.abs());
    // Decompose ryu's text into significant digits and the decimal exponent `n` of ECMA-262's
    // Number::toString (value = 0.d1d2…dk × 10^n).
    let (mantissa, exponent) = match shortest.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (shortest, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: Vec<u8> = int_part.bytes().chain(frac_part.bytes()).collect();
    let mut n = int_part.len() as i32 + exponent;
    let leading = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..leading);
    n -= leading as i32;
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    let k = digits.len() as i32;
    let text = |d: &[u8]| String::from_utf8_lossy(d).into_owned();
    if k <= n && n <= 21 {
        out.push_str(&text(&digits));
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&text(&digits[..n as usize]));
        out.push('.');
        out.push_str(&text(&digits[n as usize..]));
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&text(&digits));
    } else {
        let e = n - 1;
        out.push_str(&text(&digits[..1]));
        if k > 1 {
            out.push('.');
            out.push_str(&text(&digits[1..]));
        }
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
}

/// ECMAScript `String(v)` of a JSON value, as a template literal or `Array.prototype.join` prints it:
/// numbers as JavaScript prints them, `null` as `null`, objects as `[object Object]`, arrays as their
/// elements joined with `,` (a `null` element printing nothing, as `join` does). Iterative, so any depth
/// is safe. What a block message or an abort reason prints as.
pub fn js_string(value: &Value) -> String {
    enum Work<'a> {
        Value(&'a Value, bool),
        Comma,
    }
    let mut out = String::new();
    let mut stack = vec![Work::Value(value, false)];
    while let Some(work) = stack.pop() {
        match work {
            Work::Comma => out.push(','),
            Work::Value(Value::Null, in_array) => {
                if !in_array {
                    out.push_str("null");
                }
            }
            Work::Value(Value::Bool(b), _) => out.push_str(if *b { "true" } else { "false" }),
            Work::Value(Value::Number(n), _) => push_js_number(&mut out, js_f64(n)),
            Work::Value(Value::String(s), _) => out.push_str(s),
            Work::Value(Value::Object(_), _) => out.push_str("[object Object]"),
            Work::Value(Value::Array(items), _) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Work::Value(item, true));
                    if i > 0 {
                        stack.push(Work::Comma);
                    }
                }
            }
        }
    }
    out
}

/// `JSON.stringify` of a scalar or an array of scalars (what enum/const diagnostics print).
/// Containers nested deeper are printed by serde_json (never reached for asserted schemas).
pub(crate) fn js_stringify_shallow(value: &Value) -> String {
    fn scalar(out: &mut String, v: &Value) {
        match v {
            Value::Number(n) => out.push_str(&js_number_string(js_f64(n))),
            Value::String(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Array(_) | Value::Object(_) => out.push_str(&serde_json::to_string(v).unwrap_or_default()),
        }
    }
    let mut out = String::new();
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                scalar(&mut out, item);
            }
            out.push(']');
        }
        other => scalar(&mut out, other),
    }
    out
}

/// Negative zero, which JSON text cannot carry.
fn negative_zero(n: &Number) -> bool {
    n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()) && !n.is_i64() && !n.is_u64()
}

/// Whether a value survives a lossless JSON snapshot: JSON text cannot carry negative zero, so a `-0.0`
/// anywhere makes the value lossy (NaN and infinities cannot occur in a `serde_json::Value`).
pub fn is_lossless(root: &Value) -> bool {
    // Scalars are checked where they stand; only nested containers are stacked, so a flat value (a
    // content block, most arguments) is checked without allocating.
    let mut stack: Vec<&Value> = Vec::new();
    let mut next = Some(root);
    while let Some(value) = next.take().or_else(|| stack.pop()) {
        let members: &mut dyn Iterator<Item = &Value> = match value {
            // Only the root can be a scalar here: members that are scalars are checked below.
            Value::Number(n) if negative_zero(n) => return false,
            Value::Array(items) => &mut items.iter(),
            Value::Object(map) => &mut map.values(),
            _ => continue,
        };
        for member in members {
            match member {
                Value::Number(n) if negative_zero(n) => return false,
                Value::Array(_) | Value::Object(_) => stack.push(member),
                _ => {}
            }
        }
    }
    true
}

/// Whether a property key is an array index, which JavaScript enumerates first, ascending.
pub(crate) fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    // 2^32 - 1 is not an array index.
    if n < u64::from(u32::MAX) { u32::try_from(n).ok() } else { None }
}

/// The number a JavaScript snapshot holds in place of `n`, when it differs: JSON numbers are IEEE
/// doubles there, so an integral float within ±2^53 (`2.0`) is the integer `2`, and an integer beyond
/// ±2^53 is the double it rounds to (`9007199254740993` is `9007199254740992`). Negative zero is left
/// to the lossless check.
fn js_number(n: &Number) -> Option<Number> {
    const SAFE: u64 = 1 << 53;
    let rounded = |f: f64| -> Number {
        // 2^64 and -2^63 bound the integers serde_json can hold exactly.
        if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
            Number::from(f as u64)
        } else if (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
            Number::from(f as i64)
        } else {
            Number::from_f64(f).unwrap_or_else(|| Number::from(0))
        }
    };
    if let Some(u) = n.as_u64() {
        return (u > SAFE).then(|| rounded(u as f64));
    }
    if let Some(i) = n.as_i64() {
        return (i.unsigned_abs() > SAFE).then(|| rounded(i as f64));
    }
    let f = n.as_f64()?;
    let integral = f.fract() == 0.0 && f.abs() <= SAFE as f64 && !(f == 0.0 && f.is_sign_negative());
    integral.then(|| rounded(f))
}

/// Reorder every object in place into JavaScript's own-property order (array-index keys ascending,
/// then the rest in insertion order), which is the order a lossless JS snapshot exposes, and hold every
/// number as JavaScript does (an IEEE double: `2.0` is `2`, integers beyond ±2^53 round).
pub(crate) fn js_property_order(root: &mut Value) {
    js_walk(root, false);
}

/// [`is_lossless`] and, when it holds, [`js_property_order`], in one walk: what a lossless JavaScript
/// snapshot of `root` is. `false`: `root` is lossy, and may be left partly reordered (every caller
/// discards a lossy value).
pub(crate) fn js_snapshot(root: &mut Value) -> bool {
    js_walk(root, true)
}

/// The walk behind [`js_property_order`] and [`js_snapshot`]: with `lossless_only`, it stops at the first
/// negative zero and returns `false` (without, negative zero is left as it is: it has no other double).
fn js_walk(root: &mut Value, lossless_only: bool) -> bool {
    // Only containers go on the stack, and the root is taken first without it: a scalar or a flat
    // object (the usual tool arguments and outputs) allocates nothing here.
    let mut stack: Vec<&mut Value> = Vec::new();
    let mut next = Some(root);
    while let Some(value) = next.take().or_else(|| stack.pop()) {
        let children: &mut dyn Iterator<Item = &mut Value> = match value {
            Value::Object(map) => {
                js_key_order(map);
                &mut map.values_mut()
            }
            Value::Array(items) => &mut items.iter_mut(),
            Value::Number(n) => {
                if lossless_only && negative_zero(n) {
                    return false;
                }
                js_double(n);
                continue;
            }
            _ => continue,
        };
        for child in children {
            match child {
                Value::Object(_) | Value::Array(_) => stack.push(child),
                Value::Number(n) if lossless_only && negative_zero(n) => return false,
                Value::Number(n) => js_double(n),
                _ => {}
            }
        }
    }
    true
}

/// Reorder one object's keys into JavaScript's own-property order (array indices ascending, then the
/// rest in insertion order); an object without an array-index key is left as it is.
fn js_key_order(map: &mut Map<String, Value>) {
    if !map.keys().any(|k| array_index(k).is_some()) {
        return;
    }
    let taken = std::mem::take(map);
    let mut entries: Vec<(Option<u32>, usize, String, Value)> =
        taken.into_iter().enumerate().map(|(pos, (k, v))| (array_index(&k), pos, k, v)).collect();
    entries.sort_by_key(|(idx, pos, _, _)| match idx {
        Some(i) => (0u8, u64::from(*i)),
        None => (1u8, *pos as u64),
    });
    let mut rebuilt = Map::with_capacity(entries.len());
    for (_, _, k, v) in entries {
        rebuilt.insert(k, v);
    }
    *map = rebuilt;
}

/// Hold a number as JavaScript does (an IEEE double).
fn js_double(n: &mut Number) {
    if let Some(js) = js_number(n) {
        *n = js;
    }
}

/// One container under construction in a bottom-up rebuild.
pub(crate) enum Shape {
    Array(Vec<Slot>),
    Object(Vec<(String, Slot)>),
}

/// A child position: an inline leaf or an arena node built later (higher index).
pub(crate) enum Slot {
    Leaf(Value),
    Node(usize),
}

/// Clone a value of any depth without recursion.
pub fn deep_clone(root: &Value) -> Value {
    match root {
        Value::Array(_) | Value::Object(_) => {}
        leaf => return leaf.clone(),
    }
    let mut shapes: Vec<Shape> = Vec::new();
    // (source container, parent shape index and slot position to patch)
    let mut stack: Vec<(&Value, Option<(usize, usize)>)> = vec![(root, None)];
    while let Some((source, parent)) = stack.pop() {
        let index = shapes.len();
        if let Some((p, pos)) = parent {
            match &mut shapes[p] {
                Shape::Array(slots) => slots[pos] = Slot::Node(index),
                Shape::Object(slots) => slots[pos].1 = Slot::Node(index),
            }
        }
        match source {
            Value::Array(items) => {
                let mut slots = Vec::with_capacity(items.len());
                for (pos, item) in items.iter().enumerate() {
                    match item {
                        Value::Array(_) | Value::Object(_) => {
                            slots.push(Slot::Leaf(Value::Null));
                            stack.push((item, Some((index, pos))));
                        }
                        leaf => slots.push(Slot::Leaf(leaf.clone())),
                    }
                }
                shapes.push(Shape::Array(slots));
            }
            Value::Object(map) => {
                let mut slots = Vec::with_capacity(map.len());
                for (pos, (key, item)) in map.iter().enumerate() {
                    match item {
                        Value::Array(_) | Value::Object(_) => {
                            slots.push((key.clone(), Slot::Leaf(Value::Null)));
                            stack.push((item, Some((index, pos))));
                        }
                        leaf => slots.push((key.clone(), Slot::Leaf(leaf.clone()))),
                    }
                }
                shapes.push(Shape::Object(slots));
            }
            _ => {}
        }
    }
    assemble(shapes)
}

/// Build the value from an arena whose children always have higher indices than their parents; node 0 is
/// the root.
fn assemble(shapes: Vec<Shape>) -> Value {
    assemble_from(Slot::Node(0), shapes)
}

/// Build `root` from an arena whose children always have higher indices than their parents: building
/// from the last node down never recurses.
pub(crate) fn assemble_from(root: Slot, shapes: Vec<Shape>) -> Value {
    let mut built: Vec<Option<Value>> = Vec::with_capacity(shapes.len());
    built.resize_with(shapes.len(), || None);
    let take = |slot: Slot, built: &mut Vec<Option<Value>>| match slot {
        Slot::Leaf(v) => v,
        Slot::Node(i) => built.get_mut(i).and_then(Option::take).unwrap_or(Value::Null),
    };
    for (index, shape) in shapes.into_iter().enumerate().rev() {
        let value = match shape {
            Shape::Array(slots) => Value::Array(slots.into_iter().map(|s| take(s, &mut built)).collect()),
            Shape::Object(slots) => {
                let mut map = Map::with_capacity(slots.len());
                for (k, s) in slots {
                    let v = take(s, &mut built);
                    map.insert(k, v);
                }
                Value::Object(map)
            }
        };
        built[index] = Some(value);
    }
    take(root, &mut built)
}

/// Drop a value of any depth without recursion.
pub fn dismantle(root: Value) {
    // A value with no container inside a container drops at depth one: no stack to allocate.
    let nested = |v: &Value| matches!(v, Value::Array(_) | Value::Object(_));
    let shallow = match &root {
        Value::Array(items) => !items.iter().any(nested),
        Value::Object(map) => !map.values().any(nested),
        _ => true,
    };
    if shallow {
        return;
    }
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Builder for the DSL compiler: an arena of objects/arrays assembled bottom-up without recursion.
pub(crate) struct TreeBuilder {
    shapes: Vec<Shape>,
}

impl TreeBuilder {
    pub(crate) fn new() -> Self {
        Self { shapes: Vec::new() }
    }

    /// Start a new object node; its index is always higher than every node created before it.
    pub(crate) fn object(&mut self) -> usize {
        self.shapes.push(Shape::Object(Vec::new()));
        self.shapes.len() - 1
    }

    /// Start a new array node.
    pub(crate) fn array(&mut self) -> usize {
        self.shapes.push(Shape::Array(Vec::new()));
        self.shapes.len() - 1
    }

    /// Append a leaf field to an object node.
    pub(crate) fn set_leaf(&mut self, node: usize, key: &str, value: Value) {
        if let Some(Shape::Object(fields)) = self.shapes.get_mut(node) {
            fields.push((key.to_owned(), Slot::Leaf(value)));
        }
    }

    /// Append a field referring to a later-created node.
    pub(crate) fn set_node(&mut self, node: usize, key: &str, child: usize) {
        if let Some(Shape::Object(fields)) = self.shapes.get_mut(node) {
            fields.push((key.to_owned(), Slot::Node(child)));
        }
    }

    /// Append an element referring to a later-created node.
    pub(crate) fn push_node(&mut self, node: usize, child: usize) {
        if let Some(Shape::Array(items)) = self.shapes.get_mut(node) {
            items.push(Slot::Node(child));
        }
    }

    /// Assemble node 0 as the root.
    pub(crate) fn finish(self) -> Value {
        assemble(self.shapes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn js_number_formatting() {
        let cases = [
            (1.5, "1.5"),
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (100.0, "100"),
            (0.5, "0.5"),
            (123456789012345680000.0, "123456789012345680000"),
            (-2.5e-6, "-0.0000025"),
            (1.2345e25, "1.2345e+25"),
            (-0.0, "0"),
        ];
        for (f, s) in cases {
            assert_eq!(js_number_string(f), s);
        }
    }

    #[test]
    fn js_string_follows_ecmascript() {
        let cases = [
            (json!(null), "null"),
            (json!(true), "true"),
            (json!(2.0), "2"),
            (json!(9007199254740993u64), "9007199254740992"),
            (json!("s"), "s"),
            (json!({"a": 1}), "[object Object]"),
            (json!([1, null, [2, [3.5, "x"]], {"k": 1}, []]), "1,,2,3.5,x,[object Object],"),
        ];
        for (value, text) in cases {
            assert_eq!(js_string(&value), text, "{value}");
        }
        let mut deep = json!(1);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(js_string(&deep), "1");
        dismantle(deep);
    }

    #[test]
    fn negative_zero_is_found_at_any_position() {
        for lossy in [json!(-0.0), json!([1, -0.0]), json!({"a": {"b": [2, {"c": -0.0}]}}), json!([[[[-0.0]]]])] {
            assert!(!is_lossless(&lossy), "{lossy}");
        }
        for fine in [json!(0.0), json!(0), json!({"a": [0, 1.5, "x", null, {"b": -1}]}), json!([])] {
            assert!(is_lossless(&fine), "{fine}");
        }
    }

    #[test]
    fn snapshots_hold_javascript_numbers() {
        let mut value = json!([2.0, 2.5, 9007199254740993u64, -9007199254740993i64, 9007199254740992u64, 1e300, 18446744073709551615u64, 0.0, -0.0]);
        js_property_order(&mut value);
        assert_eq!(value.to_string(), "[2,2.5,9007199254740992,-9007199254740992,9007199254740992,1e+300,1.8446744073709552e+19,0,-0.0]");
    }

    #[test]
    fn property_order_puts_indices_first() {
        let mut v: Value = serde_json::from_str(r#"{"b":1,"10":2,"a":{"2":0,"x":1,"1":2},"01":3,"1":4}"#)
            .unwrap_or(Value::Null);
        js_property_order(&mut v);
        assert_eq!(v.to_string(), r#"{"1":4,"10":2,"b":1,"a":{"1":2,"2":0,"x":1},"01":3}"#);
    }

    /// Values with array-index and plain keys, integral floats, big integers and negative zero.
    fn values() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            prop_oneof![Just(0.0), Just(-0.0), Just(2.0), Just(2.5), Just(9007199254740993.0)].prop_map(|f| json!(f)),
            any::<i64>().prop_map(|i| json!(i)),
            "[a-c]{0,2}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((prop_oneof![Just("1".to_owned()), Just("01".to_owned()), Just("7".to_owned()), "[a-c]{1,2}"], inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// The one-walk snapshot agrees with the lossless check and, for a lossless value, leaves exactly
        /// what the property order gives (compared as text, so key order counts).
        #[test]
        fn the_one_walk_snapshot_is_the_check_then_the_order(value in values()) {
            let mut walked = value.clone();
            let lossless = js_snapshot(&mut walked);
            proptest::prop_assert_eq!(lossless, is_lossless(&value));
            if lossless {
                let mut ordered = value;
                js_property_order(&mut ordered);
                proptest::prop_assert_eq!(walked.to_string(), ordered.to_string());
            }
        }
    }

    #[test]
    fn deep_clone_and_dismantle_do_not_overflow() {
        let mut v = Value::Null;
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        let c = deep_clone(&v);
        let mut depth = 0;
        let mut cur = &c;
        while let Value::Array(items) = cur {
            depth += 1;
            cur = &items[0];
        }
        assert_eq!(depth, 100_000);
        dismantle(c);
        dismantle(v);
    }
}
