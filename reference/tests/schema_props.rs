//! Properties of the schema module over generated schemas and values:
//!
//! - (a) a value generated to conform to a generated SUPPORTED raw schema (the subset
//!   `assert_supported_json_schema` accepts) validates with no violation;
//! - (b) a targeted corruption of such a value (a wrong type at a chosen path, a missing required key, an
//!   extra key under `additionalProperties: false`, a non-member of an `enum`) is rejected with a violation
//!   naming that path;
//! - (c) `validate_json_schema_value`, `assert_supported_json_schema` and both DSL compilers never panic
//!   on arbitrary JSON (arbitrary schemas × arbitrary values), and a DSL schema that compiles is in the
//!   subset;
//! - (d) differential against the `jsonschema` crate (draft 2020-12) on the supported subset: the same
//!   verdict (valid / invalid) for every generated schema and instance (conforming, corrupted, arbitrary).
//!
//! Where the subset legitimately differs from draft 2020-12 the generators stay out of the way, and the
//! differences are listed here: `-0` is not a lossless JSON number (the subset rejects it for `number`
//! and `integer` and anywhere under an annotation-only node; draft 2020-12 accepts it), so no generator
//! emits `-0`; numbers stay within ±2^53 because the subset compares numbers as JavaScript doubles
//! (`enum`/`const` equality of 2^53 and 2^53+1) while `jsonschema` compares them exactly. `oneOf`
//! (exactly one branch) and integer-valued floats such as `1.0` (an `integer`) agree and are generated.
//!
//! `PROPTEST_CASES` sets the case count (default 64); failures persist to
//! `proptest-regressions/schema_props.txt`.
//!
//! Spec: SCHEMA-004, SCHEMA-005, SCHEMA-008, SCHEMA-009, SCHEMA-011, SCHEMA-019..SCHEMA-024, SCHEMA-027..SCHEMA-029.

use dsh_tools::schema::check::assert_supported_json_schema;
use dsh_tools::schema::dsl::{parameter_spec_to_json_schema, value_spec_to_json_schema};
use dsh_tools::schema::validate::validate_json_schema_value;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{Map, Number, Value, json};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

/// Largest integer magnitude generated: beyond 2^53 the subset's double comparison and `jsonschema`'s exact
/// comparison legitimately differ.
const SAFE: i64 = 1 << 53;

// ---------------------------------------------------------------------------------------------------
// A supported schema, as a tree that knows how to render itself and how to generate conforming values.

#[derive(Clone, Debug)]
enum Kind {
    Str,
    Num,
    Int,
    Bool,
    Null,
}

#[derive(Clone, Debug)]
enum S {
    /// Annotation-only: unconstrained JSON.
    Any,
    Scalar { kind: Kind, allowed: Option<Vec<Value>>, constant: Option<Value> },
    Array(Option<Box<S>>),
    /// Declared properties (distinct `p*` names), required names, `additionalProperties` (absent / bool).
    Object { props: Vec<(String, S)>, required: Vec<String>, additional: Option<bool> },
    /// Branches of pairwise distinct top-level JSON kinds, so that a value conforming to one branch matches
    /// no other: conformance generation stays exact.
    OneOf(Vec<S>),
}

/// The JSON kind a typed node accepts (`number` and `integer` share one).
fn top_kind(s: &S) -> Option<u8> {
    match s {
        S::Any | S::OneOf(_) => None,
        S::Scalar { kind: Kind::Str, .. } => Some(0),
        S::Scalar { kind: Kind::Num | Kind::Int, .. } => Some(1),
        S::Scalar { kind: Kind::Bool, .. } => Some(2),
        S::Scalar { kind: Kind::Null, .. } => Some(3),
        S::Array(_) => Some(4),
        S::Object { .. } => Some(5),
    }
}

fn num(f: f64) -> Value {
    Value::Number(Number::from_f64(f).expect("finite"))
}

impl S {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        match self {
            S::Any => {
                m.insert("description".into(), json!("any"));
            }
            S::Scalar { kind, allowed, constant } => {
                let ty = match kind {
                    Kind::Str => "string",
                    Kind::Num => "number",
                    Kind::Int => "integer",
                    Kind::Bool => "boolean",
                    Kind::Null => "null",
                };
                m.insert("type".into(), json!(ty));
                if let Some(a) = allowed {
                    m.insert("enum".into(), Value::Array(a.clone()));
                }
                if let Some(c) = constant {
                    m.insert("const".into(), c.clone());
                }
            }
            S::Array(items) => {
                m.insert("type".into(), json!("array"));
                if let Some(i) = items {
                    m.insert("items".into(), i.to_json());
                }
            }
            S::Object { props, required, additional } => {
                m.insert("type".into(), json!("object"));
                if !props.is_empty() || !required.is_empty() {
                    m.insert("properties".into(), Value::Object(props.iter().map(|(k, s)| (k.clone(), s.to_json())).collect()));
                }
                if !required.is_empty() {
                    m.insert("required".into(), json!(required));
                }
                if let Some(a) = additional {
                    m.insert("additionalProperties".into(), json!(a));
                }
            }
            S::OneOf(branches) => {
                m.insert("oneOf".into(), Value::Array(branches.iter().map(S::to_json).collect()));
            }
        }
        Value::Object(m)
    }
}

fn small_string() -> impl Strategy<Value = String> {
    "[a-e]{0,3}"
}

/// Finite doubles other than -0, within ±2^53, with fractional and integral values both common.
fn finite_number() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-1000i64..1000).prop_map(|i| i as f64),
        (-1000i64..1000).prop_map(|i| i as f64 / 4.0),
        (-SAFE..SAFE).prop_map(|i| i as f64),
        any::<f64>().prop_filter("finite, not -0, within 2^53", |f| f.is_finite() && f.abs() < SAFE as f64 && !(*f == 0.0 && f.is_sign_negative())),
    ]
    .prop_map(|f| if f == 0.0 { 0.0 } else { f })
}

fn integer_number() -> impl Strategy<Value = Value> {
    prop_oneof![(-1000i64..1000).prop_map(Value::from), (-1000i64..1000).prop_map(|i| num(i as f64)), (-SAFE..SAFE).prop_map(Value::from)]
}

fn scalar_value(kind: &Kind) -> BoxedStrategy<Value> {
    match kind {
        Kind::Str => small_string().prop_map(Value::String).boxed(),
        Kind::Num => prop_oneof![finite_number().prop_map(num), integer_number()].boxed(),
        Kind::Int => integer_number().boxed(),
        Kind::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Kind::Null => Just(Value::Null).boxed(),
    }
}

fn scalar_schema() -> impl Strategy<Value = S> {
    let kind = prop_oneof![Just(Kind::Str), Just(Kind::Num), Just(Kind::Int), Just(Kind::Bool), Just(Kind::Null)];
    (kind, 0u8..4, any::<Index>()).prop_flat_map(|(kind, mode, pick)| {
        // mode: 0 plain, 1 enum, 2 const, 3 enum + const (a member).
        let members = prop::collection::vec(scalar_value(&kind), 1..4);
        (Just(kind), Just(mode), Just(pick), members).prop_map(|(kind, mode, pick, members)| {
            let chosen = members[pick.index(members.len())].clone();
            let (allowed, constant) = match mode {
                0 => (None, None),
                1 => (Some(members), None),
                2 => (None, Some(chosen)),
                _ => (Some(members), Some(chosen)),
            };
            S::Scalar { kind, allowed, constant }
        })
    })
}

/// Generated supported schemas.
fn schema() -> impl Strategy<Value = S> {
    let leaf = prop_oneof![4 => scalar_schema(), 1 => Just(S::Any)];
    leaf.prop_recursive(4, 40, 4, |inner| {
        prop_oneof![
            prop::option::of(inner.clone()).prop_map(|i| S::Array(i.map(Box::new))),
            (prop::collection::vec(inner.clone(), 0..4), prop::collection::vec(any::<bool>(), 4), prop::option::of(any::<bool>()))
                .prop_map(|(children, req, additional)| {
                    let props: Vec<(String, S)> = children.into_iter().enumerate().map(|(i, s)| (format!("p{i}"), s)).collect();
                    let required = props.iter().zip(req).filter(|(_, r)| *r).map(|((k, _), _)| k.clone()).collect();
                    S::Object { props, required, additional }
                }),
            prop::collection::vec(inner, 2..4).prop_map(|branches| {
                // Keep the first branch of each JSON kind; a oneOf needs two.
                let mut seen = Vec::new();
                let mut kept = Vec::new();
                for b in branches {
                    if let Some(k) = top_kind(&b) {
                        if !seen.contains(&k) {
                            seen.push(k);
                            kept.push(b);
                        }
                    }
                }
                if kept.len() >= 2 { S::OneOf(kept) } else { S::Array(None) }
            }),
        ]
    })
}

/// Arbitrary JSON (no -0, numbers within ±2^53).
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        finite_number().prop_map(num),
        integer_number(),
        small_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[pxa-c][0-3]?", inner), 0..4).prop_map(|e| Value::Object(e.into_iter().collect())),
        ]
    })
}

/// Values conforming to `s`.
fn conforming(s: &S) -> BoxedStrategy<Value> {
    match s {
        S::Any => any_json().boxed(),
        S::Scalar { constant: Some(c), .. } => Just(c.clone()).boxed(),
        S::Scalar { allowed: Some(a), .. } => prop::sample::select(a.clone()).boxed(),
        S::Scalar { kind, .. } => scalar_value(kind),
        S::Array(None) => prop::collection::vec(any_json(), 0..3).prop_map(Value::Array).boxed(),
        S::Array(Some(items)) => prop::collection::vec(conforming(items), 0..3).prop_map(Value::Array).boxed(),
        S::Object { props, required, additional } => {
            let entries: Vec<BoxedStrategy<Option<(String, Value)>>> = props
                .iter()
                .map(|(k, s)| {
                    let key = k.clone();
                    let value = conforming(s).prop_map(move |v| (key.clone(), v));
                    if required.contains(k) { value.prop_map(Some).boxed() } else { prop::option::of(value).boxed() }
                })
                .collect();
            // Undeclared keys (`x*`, never a declared `p*`) only where the object is open.
            let extra = if *additional == Some(false) {
                Just(Vec::new()).boxed()
            } else {
                prop::collection::vec(("x[a-c]", any_json()), 0..3).boxed()
            };
            (entries, extra)
                .prop_map(|(entries, extra)| {
                    let mut m = Map::new();
                    for (k, v) in entries.into_iter().flatten().chain(extra) {
                        m.insert(k, v);
                    }
                    Value::Object(m)
                })
                .boxed()
        }
        S::OneOf(branches) => {
            let options: Vec<BoxedStrategy<Value>> = branches.iter().map(conforming).collect();
            prop::strategy::Union::new(options).boxed()
        }
    }
}

fn schema_and_value() -> impl Strategy<Value = (S, Value)> {
    schema().prop_flat_map(|s| {
        let v = conforming(&s);
        (Just(s), v)
    })
}

// ---------------------------------------------------------------------------------------------------
// Corruptions.

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

fn render(path: &[Seg]) -> String {
    let mut out = String::from("value");
    for seg in path {
        match seg {
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Every (path, schema node) pair where the value has a member checked by a typed node, outside any
/// `oneOf` (inside one, a violation is reported at the `oneOf`, not at the member).
fn sites<'s>(s: &'s S, v: &Value, path: &mut Vec<Seg>, out: &mut Vec<(Vec<Seg>, &'s S)>) {
    match s {
        S::Any => {}
        S::OneOf(_) | S::Scalar { .. } => out.push((path.clone(), s)),
        S::Array(items) => {
            out.push((path.clone(), s));
            if let (Some(items), Value::Array(vs)) = (items, v) {
                for (i, item) in vs.iter().enumerate() {
                    path.push(Seg::Index(i));
                    sites(items, item, path, out);
                    path.pop();
                }
            }
        }
        S::Object { props, .. } => {
            out.push((path.clone(), s));
            if let Value::Object(m) = v {
                for (k, child) in props {
                    if let Some(cv) = m.get(k) {
                        path.push(Seg::Key(k.clone()));
                        sites(child, cv, path, out);
                        path.pop();
                    }
                }
            }
        }
    }
}

fn at_mut<'v>(v: &'v mut Value, path: &[Seg]) -> &'v mut Value {
    path.iter().fold(v, |v, seg| match (seg, v) {
        (Seg::Key(k), Value::Object(m)) => m.get_mut(k).expect("site key"),
        (Seg::Index(i), Value::Array(a)) => &mut a[*i],
        _ => unreachable!("sites follow the value"),
    })
}

/// A value of a JSON kind `s` does not accept at its top.
fn wrong_value(s: &S) -> Value {
    let kinds: Vec<u8> = match s {
        S::OneOf(b) => b.iter().filter_map(top_kind).collect(),
        other => top_kind(other).into_iter().collect(),
    };
    let candidates = [(0u8, json!("zz")), (1, json!(12.5)), (2, json!(true)), (3, Value::Null), (4, json!([])), (5, json!({}))];
    candidates.into_iter().find(|(k, _)| !kinds.contains(k)).map(|(_, v)| v).expect("a oneOf has at most 3 branches")
}

#[derive(Clone, Copy, Debug)]
enum Corruption {
    WrongType,
    MissingRequired,
    ExtraKey,
    NotMember,
}

/// Apply the corruption at the chosen site, if that site admits it; returns the expected violation prefix.
fn corrupt(s: &S, value: &mut Value, which: Corruption, pick: Index) -> Option<String> {
    let mut all = Vec::new();
    sites(s, value, &mut Vec::new(), &mut all);
    let fits: Vec<&(Vec<Seg>, &S)> = all
        .iter()
        .filter(|(_, node)| match (which, node) {
            (Corruption::WrongType, _) => true,
            (Corruption::MissingRequired, S::Object { required, .. }) => !required.is_empty(),
            (Corruption::ExtraKey, S::Object { additional: Some(false), .. }) => true,
            (Corruption::NotMember, S::Scalar { kind: Kind::Str | Kind::Num | Kind::Int, allowed: Some(_), .. }) => true,
            _ => false,
        })
        .collect();
    if fits.is_empty() {
        return None;
    }
    let (path, node) = fits[pick.index(fits.len())];
    let rendered = render(path);
    let target = at_mut(value, path);
    Some(match (which, node) {
        (Corruption::WrongType, node) => {
            *target = wrong_value(node);
            format!("\"{rendered}\" must ")
        }
        (Corruption::MissingRequired, S::Object { required, .. }) => {
            let key = &required[pick.index(required.len())];
            target.as_object_mut().expect("object site").remove(key);
            format!("missing required property \"{rendered}.{key}\"")
        }
        (Corruption::ExtraKey, _) => {
            target.as_object_mut().expect("object site").insert("zz_extra".into(), json!(1));
            format!("\"{rendered}.zz_extra\" is not a declared property (additionalProperties: false)")
        }
        (Corruption::NotMember, S::Scalar { kind, .. }) => {
            // Generated members are `[a-e]{0,3}` strings or numbers within ±2^53.
            *target = match kind {
                Kind::Str => json!("zzzz"),
                Kind::Num => json!(1e300),
                _ => json!(SAFE * 4),
            };
            format!("\"{rendered}\" must be one of ")
        }
        _ => unreachable!("filtered above"),
    })
}

fn corruption() -> impl Strategy<Value = Corruption> {
    prop_oneof![Just(Corruption::WrongType), Just(Corruption::MissingRequired), Just(Corruption::ExtraKey), Just(Corruption::NotMember)]
}

// ---------------------------------------------------------------------------------------------------
// Arbitrary, schema-flavoured JSON for the no-panic property.

fn schema_ish() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "type", "type", "oneOf", "properties", "required", "required", "additionalProperties", "items", "enum", "const",
        "description", "title", "default", "examples", "pattern", "$ref", "a", "b",
    ]);
    let leaf = prop_oneof![
        prop::sample::select(vec!["object", "array", "string", "number", "integer", "boolean", "null", "json", "foo", "a", "b"])
            .prop_map(|s| json!(s)),
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", Number::from_f64).prop_map(Value::Number),
        Just(num(-0.0)),
        ".{0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 48, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|e| Value::Object(e.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

// ---------------------------------------------------------------------------------------------------

fn jsonschema_verdict(schema: &Value, instance: &Value) -> bool {
    let validator = jsonschema::draft202012::new(schema).expect("a supported schema is a valid 2020-12 schema");
    validator.is_valid(instance)
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/schema_props.txt"))),
        ..Config::default()
    })]

    /// (a) Generated schemas are in the subset and conforming values validate with no violation.
    #[test]
    fn conforming_values_validate((s, value) in schema_and_value()) {
        let schema = s.to_json();
        prop_assert_eq!(assert_supported_json_schema(&schema).map_err(|e| e.to_string()), Ok(()));
        let violations = validate_json_schema_value(&schema, &value, "value");
        prop_assert!(violations.is_empty(), "schema {schema}\nvalue {value}\nviolations {violations:?}");
    }

    /// (b) A targeted corruption is rejected with a violation naming its path.
    #[test]
    fn corruptions_name_their_path((s, value) in schema_and_value(), which in corruption(), pick in any::<Index>()) {
        let schema = s.to_json();
        let mut corrupted = value.clone();
        let Some(expected) = corrupt(&s, &mut corrupted, which, pick) else { return Ok(()) };
        let violations = validate_json_schema_value(&schema, &corrupted, "value");
        prop_assert!(
            violations.iter().any(|v| v.starts_with(&expected)),
            "{which:?}: expected a violation starting {expected:?}\nschema {schema}\nvalue {corrupted}\nviolations {violations:?}"
        );
        prop_assert!(!jsonschema_verdict(&schema, &corrupted), "jsonschema accepted the corruption\nschema {schema}\nvalue {corrupted}");
    }

    /// (c) Nothing panics on arbitrary JSON, and a compiled DSL schema is in the subset.
    #[test]
    fn arbitrary_json_never_panics(schema in schema_ish(), value in schema_ish(), label in prop::sample::select(vec!["value", "", "out"])) {
        let _ = validate_json_schema_value(&schema, &value, label);
        let _ = assert_supported_json_schema(&schema);
        for compiled in [parameter_spec_to_json_schema(&schema), value_spec_to_json_schema(&schema)].into_iter().flatten() {
            prop_assert_eq!(assert_supported_json_schema(&compiled).map_err(|e| e.to_string()), Ok(()));
            let _ = validate_json_schema_value(&compiled, &value, label);
        }
    }

    /// (d) Same verdict as `jsonschema` (draft 2020-12) on conforming, corrupted and arbitrary instances.
    #[test]
    fn same_verdict_as_jsonschema(
        (s, value) in schema_and_value(),
        which in corruption(),
        pick in any::<Index>(),
        other in any_json(),
    ) {
        let schema = s.to_json();
        let mut corrupted = value.clone();
        corrupt(&s, &mut corrupted, which, pick);
        for instance in [&value, &corrupted, &other] {
            let ours = validate_json_schema_value(&schema, instance, "value");
            let theirs = jsonschema_verdict(&schema, instance);
            prop_assert_eq!(ours.is_empty(), theirs, "schema {}\ninstance {}\nours {:?}", schema, instance, ours);
        }
    }
}

/// The documented differences, pinned: `-0` is not lossless JSON for the subset, while draft 2020-12
/// accepts it; `1.0` is an integer for both.
#[test]
fn documented_differences_from_draft_2020_12() {
    let minus_zero = num(-0.0);
    for schema in [json!({"type": "number"}), json!({"type": "integer"}), json!({})] {
        assert!(!validate_json_schema_value(&schema, &minus_zero, "value").is_empty(), "{schema}");
        assert!(jsonschema_verdict(&schema, &minus_zero), "{schema}");
    }
    let one = num(1.0);
    assert!(validate_json_schema_value(&json!({"type": "integer"}), &one, "value").is_empty());
    assert!(jsonschema_verdict(&json!({"type": "integer"}), &one));
    let either = json!({"oneOf": [{"type": "number"}, {"type": "integer"}]});
    assert!(!validate_json_schema_value(&either, &json!(3), "value").is_empty());
    assert!(!jsonschema_verdict(&either, &json!(3)));
}
