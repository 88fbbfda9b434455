//! Properties of `schema::lower` over generated real-world-style JSON Schemas (type lists, `nullable`,
//! value constraints, `format`, `anyOf`/`oneOf`/`allOf`, local `$ref`s into `$defs`, schema-valued
//! `additionalProperties`, annotations):
//!
//! - (a) a schema that lowers is in the enforced subset (`assert_supported_json_schema` accepts it), and
//!   a failure names a `$`-rooted path;
//! - (b) lowering is idempotent: the lowered schema lowers to itself with no change reported;
//! - (c) lowering only widens, except where it reports otherwise: every value draft 2020-12 (the
//!   `jsonschema` crate) accepts under the original schema is accepted by the lowered one, unless the
//!   report says a missing `type` was inferred from object/array keywords (the one documented narrowing).
//!   Values are generated from a small pool plus arbitrary JSON, without `-0` and within ±2^53 (the
//!   subset's known differences from draft 2020-12, see `schema_props.rs`).
//!
//! `PROPTEST_CASES` sets the case count (default 64); failures persist to
//! `proptest-regressions/lower_props.txt`.

use dsh_tools::schema::check::assert_supported_json_schema;
use dsh_tools::schema::lower::lower_json_schema;
use dsh_tools::schema::validate::validate_json_schema_value;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{Map, Value, json};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

fn scalar_type() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["string", "number", "integer", "boolean", "null"])
}

fn scalar_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-5i64..5).prop_map(|n| json!(n)),
        Just(json!(1.5)),
        prop::sample::select(vec!["a", "b", ""]).prop_map(|s| json!(s)),
    ]
}

/// Keywords the subset lacks or restricts, added to a node at random.
fn extras() -> impl Strategy<Value = Map<String, Value>> {
    let pool = vec![
        ("minimum", json!(0)), ("maximum", json!(3)), ("exclusiveMinimum", json!(-1)), ("multipleOf", json!(2)),
        ("minLength", json!(1)), ("maxLength", json!(2)), ("pattern", json!("^a")), ("format", json!("email")),
        ("minItems", json!(1)), ("uniqueItems", json!(true)), ("title", json!("t")), ("description", json!("d")),
        ("examples", json!(["a"])), ("default", json!(1)), ("$comment", json!("c")), ("nullable", json!(true)),
        ("deprecated", json!(true)), ("x-vendor", json!({"k": 1})),
    ];
    prop::sample::subsequence(pool, 0..4).prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn with(mut base: Map<String, Value>, extra: Map<String, Value>) -> Value {
    for (k, v) in extra {
        base.entry(k).or_insert(v);
    }
    Value::Object(base)
}

fn leaf() -> impl Strategy<Value = Value> {
    let typed = (scalar_type(), extras()).prop_map(|(t, x)| with(obj(json!({"type": t})), x));
    let listed = (scalar_type(), extras()).prop_map(|(t, x)| with(obj(json!({"type": [t, "null"]})), x));
    let enumerated = (prop::collection::vec(scalar_value(), 1..4), extras()).prop_map(|(v, x)| with(obj(json!({"enum": v})), x));
    let constant = scalar_value().prop_map(|v| json!({"const": v}));
    let anything = extras().prop_map(Value::Object);
    prop_oneof![4 => typed, 2 => listed, 2 => enumerated, 1 => constant, 1 => anything, 1 => Just(json!({"$ref": "#/$defs/D"}))]
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 24, 4, |inner| {
        let object = (prop::collection::vec(inner.clone(), 0..3), any::<u8>(), extras(), prop::option::of(prop_oneof![
            Just(json!(false)), Just(json!(true)), Just(json!({"type": "string"}))
        ]))
            .prop_map(|(props, bits, x, additional)| {
                let mut m = Map::new();
                if bits & 1 == 1 {
                    m.insert("type".into(), json!("object"));
                }
                let names: Vec<String> = (0..props.len()).map(|i| format!("p{i}")).collect();
                m.insert("properties".into(), Value::Object(names.iter().cloned().zip(props).collect()));
                let required: Vec<Value> = names.iter().enumerate().filter(|(i, _)| bits >> (i + 1) & 1 == 1).map(|(_, n)| json!(n)).collect();
                if !required.is_empty() {
                    m.insert("required".into(), Value::Array(required));
                }
                if let Some(a) = additional {
                    m.insert("additionalProperties".into(), a);
                }
                with(m, x)
            });
        let array = (inner.clone(), extras()).prop_map(|(items, x)| with(obj(json!({"type": "array", "items": items})), x));
        let combinator = (prop::sample::select(vec!["anyOf", "oneOf", "allOf"]), prop::collection::vec(inner, 1..4))
            .prop_map(|(k, branches)| json!({ k: branches }));
        prop_oneof![3 => object, 2 => array, 2 => combinator]
    })
}

fn document() -> impl Strategy<Value = Value> {
    (schema(), leaf().prop_filter("no self-reference", |d| d.get("$ref").is_none())).prop_map(|(root, def)| {
        let mut root = obj(root);
        root.insert("$schema".into(), json!("https://json-schema.org/draft/2020-12/schema"));
        root.insert("$defs".into(), json!({ "D": def }));
        Value::Object(root)
    })
}

fn instance() -> impl Strategy<Value = Value> {
    let leaf = scalar_value();
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(vec!["p0", "p1", "p2", "k"]), inner), 0..3)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/lower_props.txt"))),
        ..Config::default()
    })]

    /// (a) and (b): lowered schemas are in the subset, and lowering them again changes nothing.
    #[test]
    fn lowered_is_supported_and_stable(doc in document()) {
        match lower_json_schema(&doc) {
            Ok(lowered) => {
                if let Err(e) = assert_supported_json_schema(&lowered.schema) {
                    prop_assert!(false, "{doc} lowered to {} which is outside the subset: {e}", lowered.schema);
                }
                let again = lower_json_schema(&lowered.schema).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&again.schema, &lowered.schema);
                prop_assert!(again.changes.is_empty(), "relowering reported {:?}", again.changes);
            }
            Err(e) => prop_assert!(e.path.starts_with('$'), "{e}"),
        }
    }

    /// (c) Whatever the original accepts, the lowered schema accepts (unless a narrowing is reported).
    #[test]
    fn lowering_only_widens(doc in document(), values in prop::collection::vec(instance(), 8)) {
        let Ok(lowered) = lower_json_schema(&doc) else { return Ok(()) };
        if lowered.changes.iter().any(|c| c.to_string().contains("inferred from its keywords")) {
            return Ok(());
        }
        // A generated document draft 2020-12 itself rejects (a type list naming "null" twice) has no verdict.
        let Ok(validator) = jsonschema::draft202012::new(&doc) else { return Ok(()) };
        for value in values {
            if validator.is_valid(&value) {
                let violations = validate_json_schema_value(&lowered.schema, &value, "value");
                prop_assert!(violations.is_empty(), "{value} fits {doc} but not its lowering {}: {violations:?}", lowered.schema);
            }
        }
    }
}
