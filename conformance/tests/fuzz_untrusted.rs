//! Property tests over the untrusted inputs the conformance crate reads (#12): the YAML reader and the
//! scenario loader (arbitrary text; generated documents with anchors, aliases and deep nesting, checked
//! against their JSON model), and the validation of adapter messages (arbitrary JSON). No input may
//! panic, and every accepted document must stay within `yaml::MAX_DEPTH`.
//!
//! Case counts: proptest's default (256 a test) in CI; `PROPTEST_CASES=N` for a long run.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::collections::BTreeMap;
use std::path::Path;

use dsh_conformance::catalog::Catalog;
use dsh_conformance::messages::MessageValidator;
use dsh_conformance::yaml::{self, MAX_DEPTH};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A node of a generated YAML document.
#[derive(Debug, Clone)]
enum Node {
    Scalar(Value),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e9f64..1e9).prop_map(|f| json!(f)),
        "[a-zA-Z0-9 _:#&*!|>'\"%@`,\\[\\]{}.\\-\u{e9}\u{4e2d}\\\\]{0,12}".prop_map(Value::String),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    scalar().prop_map(Node::Scalar).prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Node::Seq),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..5).prop_map(|entries| {
                let mut seen = std::collections::HashSet::new();
                Node::Map(entries.into_iter().filter(|(k, _)| seen.insert(k.clone())).collect())
            }),
        ]
    })
}

/// Renders `node` in flow style (JSON scalars, which YAML reads back the same), anchoring every
/// collection `&aN`; where `aliases` says so, a collection is written as an alias of the last finished
/// anchor instead, and stands for that anchor's value. Returns the JSON value the text means.
fn render(node: &Node, out: &mut String, next: &mut usize, done: &mut Vec<(String, Value)>, aliases: &[bool]) -> Value {
    let turn = *next + done.len();
    if !matches!(node, Node::Scalar(_)) && aliases.get(turn % aliases.len().max(1)).copied().unwrap_or(false) {
        if let Some((name, value)) = done.last().cloned() {
            out.push_str(&format!("*{name}"));
            return value;
        }
    }
    match node {
        Node::Scalar(v) => {
            out.push_str(&serde_json::to_string(v).unwrap());
            v.clone()
        }
        Node::Seq(items) => {
            let name = format!("a{next}");
            *next += 1;
            out.push_str(&format!("&{name} ["));
            let mut values = Vec::new();
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                values.push(render(item, out, next, done, aliases));
            }
            out.push(']');
            done.push((name, Value::Array(values.clone())));
            Value::Array(values)
        }
        Node::Map(entries) => {
            let name = format!("a{next}");
            *next += 1;
            out.push_str(&format!("&{name} {{"));
            let mut map = serde_json::Map::new();
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&format!("{k}: "));
                map.insert(k.clone(), render(v, out, next, done, aliases));
            }
            out.push('}');
            done.push((name, Value::Object(map.clone())));
            Value::Object(map)
        }
    }
}

fn empty_catalog() -> Catalog {
    Catalog::default()
}

proptest! {
    /// Arbitrary text never panics the YAML reader or the scenario loader.
    #[test]
    fn arbitrary_text_never_panics(text in "([a-z0-9 :#&*!|>'\",\\[\\]{}.\\-?%@`~\t]|\n|\r|\u{feff}|\u{e9}){0,200}") {
        let _ = yaml::parse(&text);
        let mut seen = BTreeMap::new();
        let _ = dsh_conformance::loader::load_scenarios_text(Path::new("f.yaml"), &text, &empty_catalog(), &mut seen);
    }

    /// Generated flow documents with anchors and aliases read back as their JSON model.
    #[test]
    fn generated_documents_read_back(doc in node(), aliases in prop::collection::vec(any::<bool>(), 0..64)) {
        let mut text = String::new();
        let expected = render(&doc, &mut text, &mut 0, &mut Vec::new(), &aliases);
        let parsed = yaml::parse(&text);
        let parsed = parsed.map_err(|e| TestCaseError::fail(format!("{e:?} for {text}")))?;
        prop_assert_eq!(parsed.value, expected, "{}", text);
    }

    /// Nesting, literal or through aliases, is accepted up to MAX_DEPTH and refused past it with the one
    /// message; never a panic, never the parser's own "recursion limit".
    #[test]
    fn depth_is_one_limit(levels in prop::collection::vec(1usize..120, 1..6), flow in any::<bool>()) {
        // Anchor i nests levels[i] lists around an alias of anchor i-1.
        let mut text = String::new();
        let mut total = 0;
        for (i, &n) in levels.iter().enumerate() {
            let inner = if i == 0 { "0".to_owned() } else { format!("*a{}", i - 1) };
            let body = if flow { format!("{}{inner}{}", "[".repeat(n), "]".repeat(n)) } else { format!("\n  {}{inner}", "- ".repeat(n)) };
            text.push_str(&format!("k{i}: &a{i} {body}\n"));
            total += n;
        }
        // The mapping itself is one level.
        let depth = total + 1;
        match yaml::parse(&text) {
            Ok(doc) => {
                prop_assert!(depth <= MAX_DEPTH, "accepted {depth} levels: {text}");
                prop_assert!(dsh_conformance::json::depth(&doc.value) <= MAX_DEPTH + 1);
            }
            Err(e) => {
                prop_assert!(depth > MAX_DEPTH, "refused {depth} levels: {e:?}");
                prop_assert!(e.message.contains(&format!("nesting deeper than {MAX_DEPTH} levels")), "{:?}", e);
            }
        }
    }

    /// Every adapter message, whatever its shape, is validated without a panic.
    #[test]
    fn message_validation_never_panics(value in arbitrary_json(), method in prop::sample::select(METHODS)) {
        let validator = MessageValidator::shared().unwrap();
        let _ = validator.message("response", &value);
        let _ = validator.message("error-response", &value);
        let _ = validator.message("event", &value);
        let _ = validator.event_params(&value);
        let _ = validator.result(method, &value);
        let line = serde_json::to_string(&value).unwrap();
        let parsed = dsh_conformance::json::parse_line(&line);
        prop_assert!(parsed.is_ok(), "{line}");
    }
}

const METHODS: &[&str] = &["initialize", "session/open", "tools/get", "call/await", "session/close", "schema/validate", "prompt/assemble"];

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        prop::sample::select(&["2.0", "event", "session", "result", "", "mark", "x"][..]).prop_map(|s| Value::String(s.to_owned())),
        ".{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(
                (prop::sample::select(&["jsonrpc", "id", "result", "error", "method", "params", "session", "seq", "event", "type", "label", "eventsThrough", "code", "message", "leaks"][..]), inner),
                0..6
            )
            .prop_map(|entries| Value::Object(entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}
