//! Deep schemas (100,000 levels) render without overflowing the stack, in linear time, with the
//! exact text upstream's walk defines. Values are built, rendered and dropped on a 512 MiB-stack
//! thread because `serde_json::Value` drops recursively.
//!
//! Spec: SDK-023, SDK-024.

use dsh_tools::sdk::{SdkToolSchema, json_schema_to_py, json_schema_to_ts, render_tools_sdk, render_tools_sdk_py};
use serde_json::{Value, json};

const DEPTH: usize = 100_000;

fn on_big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(f)
        .and_then(|h| h.join().map_err(|_| std::io::Error::other("deep test thread panicked")))
        .unwrap_or_else(|e| panic!("{e}"));
}

fn wrap(leaf: Value, depth: usize, mut f: impl FnMut(Value, usize) -> Value) -> Value {
    (0..depth).fold(leaf, &mut f)
}

/// `template` with `inner` moved in at `key` (`json!` would deep-copy an interpolated `Value`).
fn with(template: Value, key: &str, inner: Value) -> Value {
    let Value::Object(mut map) = template else { return template };
    map.insert(key.to_owned(), inner);
    Value::Object(map)
}

/// `{"oneOf": [first, second]}` without copying either.
fn one_of(first: Value, second: Value) -> Value {
    with(json!({}), "oneOf", Value::Array(vec![first, second]))
}

fn array_of(items: Value) -> Value {
    with(json!({"type": "array"}), "items", items)
}

fn object_with(name: &str, inner: Value, closed: bool) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert(name.to_owned(), inner);
    let mut schema = with(json!({"type": "object"}), "properties", Value::Object(properties));
    if closed {
        schema = with(schema, "required", json!([name]));
        schema = with(schema, "additionalProperties", json!(false));
    }
    schema
}

#[test]
fn deep_array_chain() {
    on_big_stack(|| {
        let schema = wrap(json!({"type": "string"}), DEPTH, |v, _| array_of(v));
        assert_eq!(json_schema_to_ts(&schema), format!("string{}", "[]".repeat(DEPTH)));
        assert_eq!(json_schema_to_py(&schema), format!("{}Any{}", "list[".repeat(180), "]".repeat(180)));
        let union = wrap(json!({"oneOf": [{"type": "string"}, {"type": "null"}]}), DEPTH, |v, _| array_of(v));
        assert_eq!(json_schema_to_ts(&union), format!("{}string | null{}", "(".repeat(DEPTH), ")[]".repeat(DEPTH)));
    });
}

#[test]
fn deep_one_of_chain() {
    on_big_stack(|| {
        let schema = wrap(json!({"type": "null"}), DEPTH, |v, _| one_of(json!({"type": "string", "const": "v"}), v));
        assert_eq!(json_schema_to_ts(&schema), format!("{}null", "\"v\" | ".repeat(DEPTH)));
        assert_eq!(json_schema_to_py(&schema), format!("{}None", "Literal[\"v\"] | ".repeat(DEPTH)));
    });
}

#[test]
fn deep_object_chain_python_declares_every_class() {
    on_big_stack(|| {
        let schema = wrap(json!({"type": "string"}), DEPTH, |v, _| object_with("next", v, true));
        let tools = vec![SdkToolSchema { name: "deep".into(), description: None, parameters: schema, output: None }];
        let python = render_tools_sdk_py(&tools);
        assert_eq!(python.matches("(TypedDict):").count(), DEPTH);
        assert!(python.contains("    async def deep(self, args: DeepArgs) -> Any: ..."));
        // Class names stay capped, so the text stays linear in depth.
        assert!(python.len() < DEPTH * 400, "{} bytes", python.len());
    });
}

#[test]
fn deep_object_chain_typescript() {
    // Indentation grows with depth (quadratic text), so this stays at a depth whose text is small.
    on_big_stack(|| {
        let depth = 2_000;
        let schema = wrap(json!({"type": "string"}), depth, |v, _| object_with("n", v, false));
        let text = json_schema_to_ts(&schema);
        assert_eq!(text.matches("n?: ").count(), depth);
        assert!(text.ends_with("} & Record<string, JsonValue>"));
    });
}

#[test]
fn deep_unsupported_leaf_degrades_whole() {
    on_big_stack(|| {
        let schema = wrap(json!({"$ref": "#/x"}), DEPTH, |v, level| {
            if level % 2 == 0 { array_of(v) } else { one_of(v, json!({"type": "null"})) }
        });
        assert_eq!(json_schema_to_ts(&schema), "unknown");
        assert_eq!(json_schema_to_py(&schema), "Any");
        let tools = vec![SdkToolSchema { name: "t".into(), description: None, parameters: json!({}), output: Some(schema) }];
        assert!(render_tools_sdk(&tools).contains("  t: unknown;"));
        assert!(render_tools_sdk_py(&tools).contains("-> Any: ..."));
    });
}

#[test]
fn deep_annotation_values_are_walked_iteratively() {
    on_big_stack(|| {
        let default = wrap(json!(-0.0), DEPTH, |v, _| Value::Array(vec![v]));
        let schema = with(json!({"type": "string"}), "default", default);
        assert_eq!(json_schema_to_ts(&schema), "unknown");
    });
}
