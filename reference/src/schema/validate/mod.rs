//! Value validation against an asserted raw schema (upstream `validateJsonSchemaValue`): total for any
//! JSON value, returning path-qualified violations in upstream's walk order — per object: missing required
//! properties, then declared properties in schema order, then undeclared keys under
//! `additionalProperties: false`; per array: items in order; `oneOf` counts exactly-one matches.
//!
//! Three passes, none recursing without bound, so 100,000-level values and schemas are fine:
//! - `plan` compiles the schema into a flat table of typed nodes (once per call here; once per
//!   registration for a tool's parameters and output, `OwnedPlan`);
//! - `fast` clears a valid value without building a path or a message (recursing at most
//!   `fast::MAX_DEPTH` levels);
//! - `walk` reports every violation of a value the quick pass did not clear, with an explicit stack.
//!
//! Spec: ARG-009..ARG-014, OUT-003, SCHEMA-004, SCHEMA-008, SCHEMA-009, SCHEMA-011, SCHEMA-018, SCHEMA-027..SCHEMA-031, SCHEMA-033.

mod fast;
pub(crate) mod plan;
mod walk;

use serde_json::{Map, Value};

pub(crate) use self::plan::OwnedPlan;
use self::plan::{Plan, Scalar};
use crate::value::{is_json_integer, is_json_number};

/// Validate `value` against `schema`; `root` labels the root in diagnostics (`value` for outputs, the
/// empty string for arguments, whose root then reads `arguments`).
pub fn validate_json_schema_value(schema: &Value, value: &Value, root: &str) -> Vec<String> {
    Plan::compile(schema).violations(value, root)
}

impl Plan<'_> {
    /// Every violation of `value`, in upstream's order (none for a value the quick pass clears).
    pub(crate) fn violations(&self, value: &Value, root: &str) -> Vec<String> {
        if fast::verdict(self, value) == Some(true) {
            return Vec::new();
        }
        walk::violations(self, value, root)
    }

    /// Whether `value` has no violation.
    pub(crate) fn admits(&self, value: &Value) -> bool {
        match fast::verdict(self, value) {
            Some(valid) => valid,
            None => walk::violations(self, value, "").is_empty(),
        }
    }
}

impl OwnedPlan {
    /// Every violation of `value`, in upstream's order; `root` labels the root in diagnostics.
    pub(crate) fn violations(&self, value: &Value, root: &str) -> Vec<String> {
        self.0.violations(value, root)
    }

    /// Whether `value` has no violation.
    pub(crate) fn admits(&self, value: &Value) -> bool {
        self.0.admits(value)
    }
}

/// Look a key up in a value object: a scan for small objects, the index otherwise.
#[inline]
pub(super) fn lookup<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if object.len() <= 8 {
        object.iter().find_map(|(k, v)| same_key(k, key).then_some(v))
    } else {
        object.get(key)
    }
}

/// Key equality without a `memcmp` call for short keys (the usual property names), which the profile showed
/// as a fifth of a small validation.
#[inline]
pub(super) fn same_key(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 16 {
        return a == b;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    diff == 0
}

/// Whether `value` is a valid instance of the scalar type `ty` (a number also finite; the one JSON text
/// number that is not, `-0`, cannot be an integer or a finite number here: `is_json_number` rejects it).
#[inline]
pub(super) fn scalar_fits(ty: Scalar, value: &Value) -> bool {
    match (ty, value) {
        (Scalar::String, Value::String(_)) | (Scalar::Boolean, Value::Bool(_)) | (Scalar::Null, Value::Null) => true,
        (Scalar::Number, Value::Number(n)) => is_json_number(n),
        (Scalar::Integer, Value::Number(n)) => is_json_integer(n),
        _ => false,
    }
}

/// Whether a value holds `-0`, the one JSON text number that is not lossless (explicit stack).
pub(super) fn has_negative_zero(value: &Value) -> bool {
    let negative_zero = |n: &serde_json::Number| n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative());
    // A scalar needs no stack.
    let mut stack = match value {
        Value::Number(n) => return negative_zero(n),
        Value::Array(_) | Value::Object(_) => vec![value],
        _ => return false,
    };
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if negative_zero(n) => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::dismantle;
    use serde_json::json;

    #[test]
    fn walk_order_matches_upstream() {
        let schema = json!({"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"c":{"type":"null"}},"additionalProperties":false});
        let got = validate_json_schema_value(&schema, &json!({"c":1,"d":2,"a":3}), "value");
        assert_eq!(
            got,
            [
                "missing required property \"value.b\"",
                "\"value.a\" must be a string",
                "\"value.c\" must be null",
                "\"value.d\" is not a declared property (additionalProperties: false)"
            ]
        );
        let schema = json!({"type":"array","items":{"type":"number","enum":[1.5,1e21,1e-7,100]}});
        let got = validate_json_schema_value(&schema, &json!([1, 2.5, "x", 1e21, 0.5]), "value");
        assert_eq!(got[0], "\"value[0]\" must be one of [1.5,1e+21,1e-7,100]");
        assert_eq!(got[2], "\"value[2]\" must be a number");
        assert_eq!(got.len(), 4);
        let schema = json!({"oneOf":[{"type":"number"},{"type":"integer"}]});
        assert_eq!(
            validate_json_schema_value(&schema, &json!(3), "value"),
            ["\"value\" must match exactly one oneOf branch (matched 2)"]
        );
        let schema = json!({"type":"object","required":["a"],"properties":{"a":{"type":"string"}}});
        assert_eq!(validate_json_schema_value(&schema, &json!({}), ""), ["missing required property \"a\""]);
        assert_eq!(validate_json_schema_value(&schema, &json!(5), ""), ["\"arguments\" must be an object"]);
    }

    #[test]
    fn negative_zero_is_not_lossless_json() {
        let minus_zero = Value::Number(serde_json::Number::from_f64(-0.0).unwrap_or_else(|| 0.into()));
        let v = |schema: Value, value: Value| validate_json_schema_value(&schema, &value, "value");
        assert_eq!(v(json!({}), minus_zero.clone()), ["\"value\" must be a lossless JSON value"]);
        assert_eq!(v(json!({"type":"object"}), json!({"a": [minus_zero.clone()]})), ["\"value\" must be a lossless JSON object"]);
        assert_eq!(v(json!({"type":"array"}), json!([1, minus_zero.clone()])), ["\"value\" must be a dense lossless JSON array"]);
        let declared = json!({"type":"object","properties":{"a":{}},"required":["b"]});
        assert_eq!(v(declared.clone(), json!({"a": minus_zero.clone()})), ["missing required property \"value.b\"", "\"value.a\" must be a lossless JSON value"]);
        assert_eq!(v(declared, json!({"x": minus_zero.clone()})), ["missing required property \"value.b\""]);
        assert_eq!(v(json!({"type":"number"}), minus_zero), ["\"value\" must be a finite JSON number"]);
    }

    #[test]
    fn deep_schema_and_value_do_not_overflow() {
        const DEPTH: usize = 100_000;
        let mut schema = json!({"type":"string"});
        let mut value = json!(5);
        for _ in 0..DEPTH {
            let mut s = Map::new();
            s.insert("type".into(), json!("array"));
            s.insert("items".into(), schema);
            schema = Value::Object(s);
            value = Value::Array(vec![value]);
        }
        let got = validate_json_schema_value(&schema, &value, "value");
        assert_eq!(got.len(), 1);
        assert!(got[0].ends_with("[0]\" must be a string"));
        assert_eq!(got[0].len(), "\"value".len() + DEPTH * 3 + "\" must be a string".len());
        assert!(crate::schema::check::schema_violations(&schema).is_empty());
        dismantle(schema);
        dismantle(value);
    }

    mod agreement {
        //! The quick pass clears exactly the values the walk finds nothing in, and an owned plan reports
        //! exactly what a borrowed one does, over generated schemas (subset and not) and values.

        use super::super::{OwnedPlan, Plan, fast, walk};
        use proptest::collection::vec;
        use proptest::prelude::*;
        use serde_json::{Map, Number, Value, json};

        fn number(f: f64) -> Value {
            Number::from_f64(f).map_or(Value::Null, Value::Number)
        }

        fn scalar() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                (-2i64..3).prop_map(|n| json!(n)),
                prop_oneof![Just(1.5), Just(-0.0), Just(0.0), Just(2.0)].prop_map(number),
                "[ab]{0,2}".prop_map(Value::String),
            ]
        }

        fn object_of<S: Strategy<Value = Value>>(inner: S) -> impl Strategy<Value = Map<String, Value>> {
            vec((prop_oneof![Just("a"), Just("b"), Just("c")], inner), 0..4)
                .prop_map(|members| members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
        }

        fn value() -> impl Strategy<Value = Value> {
            scalar().prop_recursive(4, 32, 4, |inner| {
                prop_oneof![vec(inner.clone(), 0..4).prop_map(Value::Array), object_of(inner).prop_map(Value::Object)]
            })
        }

        fn leaf_schema() -> impl Strategy<Value = Value> {
            let ty = prop_oneof![Just("string"), Just("number"), Just("integer"), Just("boolean"), Just("null")];
            prop_oneof![
                Just(json!({})),
                Just(json!({"description": "d"})),
                Just(json!({"type": "bogus"})),
                Just(json!(true)),
                ty.clone().prop_map(|t| json!({"type": t})),
                (ty.clone(), vec(scalar(), 0..3)).prop_map(|(t, e)| json!({"type": t, "enum": e})),
                (ty.clone(), scalar()).prop_map(|(t, c)| json!({"type": t, "const": c})),
                (ty, scalar()).prop_map(|(t, e)| json!({"type": t, "enum": e})),
            ]
        }

        fn schema() -> impl Strategy<Value = Value> {
            leaf_schema().prop_recursive(4, 24, 3, |inner| {
                let names = prop_oneof![Just("a"), Just("b"), Just("c"), Just("d")];
                prop_oneof![
                    (object_of(inner.clone()), vec(names, 0..3), prop_oneof![Just(None), Just(Some(false)), Just(Some(true))])
                        .prop_map(|(properties, required, additional)| {
                            let mut schema = json!({"type": "object", "properties": properties, "required": required});
                            if let (Some(additional), Value::Object(map)) = (additional, &mut schema) {
                                map.insert("additionalProperties".into(), Value::Bool(additional));
                            }
                            schema
                        }),
                    proptest::option::of(inner.clone()).prop_map(|items| match items {
                        Some(items) => json!({"type": "array", "items": items}),
                        None => json!({"type": "array"}),
                    }),
                    vec(inner, 0..3).prop_map(|branches| json!({"oneOf": branches})),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            #[test]
            fn the_quick_pass_agrees_with_the_walk(schema in schema(), value in value()) {
                let plan = Plan::compile(&schema);
                let reported = walk::violations(&plan, &value, "value");
                prop_assert_eq!(fast::verdict(&plan, &value), Some(reported.is_empty()), "{} / {}", schema, value);
                prop_assert_eq!(OwnedPlan::new(&schema).violations(&value, "value"), reported);
            }
        }

        #[test]
        fn a_value_deeper_than_the_quick_pass_goes_to_the_walk() {
            let mut schema = json!({"type": "string"});
            let mut value = json!("x");
            for _ in 0..=fast::MAX_DEPTH + 1 {
                schema = json!({"type": "array", "items": schema});
                value = Value::Array(vec![value]);
            }
            let plan = Plan::compile(&schema);
            assert_eq!(fast::verdict(&plan, &value), None);
            assert!(plan.admits(&value));
            let Value::Array(items) = &mut value else { unreachable!() };
            items.insert(0, json!(1));
            assert_eq!(fast::verdict(&plan, &value), Some(false), "found before the depth bound");
            assert!(!plan.admits(&value));
        }
    }
}
