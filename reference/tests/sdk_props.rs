//! Properties of the SDK renderers over generated schemas: they never panic, the text does not
//! depend on the order of the tool list, the TypeScript block parses as a TypeScript module
//! (`swc_ecma_parser`, the parser swc's type stripper already builds on) and the Python section parses
//! (`ast.parse`, all cases in one `python3` run). `PROPTEST_CASES` sets the case count (default 64).
//! Also the context-free codegens `json_schema_to_ts` / `json_schema_to_py`, which no scenario can reach.
//!
//! Spec: SDK-006 (order independence), SDK-008/SDK-009/SDK-010/SDK-011 (names and descriptions keep the
//! blocks parseable), SDK-023 (the `list[` cap keeps Python parseable), SDK-024 (total), SDK-026.

use std::io::Write;
use std::process::{Command, Stdio};

use dsh_tools::sdk::{SdkToolSchema, json_schema_to_py, json_schema_to_ts, render_tools_sdk, render_tools_sdk_py};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

const NAMES: [&str; 24] = [
    "path", "my-field", "class", "from", "", "2nd", "_private", "__token", "__init__", "路径", "ﬁeld", "with space",
    "quote\"d", "match", "type", "a|b", "x&y", "🙂", "e\u{301}", "self", "0", "10", "None", "__debug__",
];
const DESCRIPTIONS: [&str; 8] =
    ["", "plain", "two\nlines", "ends */ here", "\"\"\"quoted\"\"\"", "back\\", "ctl\u{1}\u{85}", " \t "];

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "number"})),
        Just(json!({"type": "integer"})),
        Just(json!({"type": "boolean"})),
        Just(json!({"type": "null"})),
        Just(json!({})),
        Just(json!({"type": "array"})),
        Just(json!({"type": "object"})),
        Just(json!({"type": "object", "additionalProperties": false})),
        prop::sample::subsequence(NAMES.to_vec(), 1..4).prop_map(|v| json!({"type": "string", "enum": v})),
        prop::sample::select(NAMES.to_vec()).prop_map(|v| json!({"type": "string", "const": v})),
        prop::collection::vec(-1e22f64..1e22, 1..3).prop_map(|v| json!({"type": "number", "enum": v})),
        any::<i64>().prop_map(|v| json!({"type": "integer", "const": v})),
        Just(json!({"type": "boolean", "const": true})),
        Just(json!({"$ref": "#/x"})),
        Just(json!({"anyOf": [{"type": "string"}]})),
        Just(json!({"type": ["string", "null"]})),
    ]
}

fn describe(schema: Value, description: Option<&str>) -> Value {
    match (schema, description) {
        (Value::Object(mut map), Some(d)) => {
            map.insert("description".into(), Value::String(d.into()));
            Value::Object(map)
        }
        (schema, _) => schema,
    }
}

fn schema() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(6, 48, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|items| json!({"type": "array", "items": items})),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|branches| json!({"oneOf": branches})),
            (
                prop::collection::vec(
                    (prop::sample::select(NAMES.to_vec()), inner, prop::option::of(prop::sample::select(DESCRIPTIONS.to_vec()))),
                    0..4
                ),
                any::<bool>(),
                any::<bool>(),
            )
                .prop_map(|(fields, closed, all_required)| {
                    let mut properties = Map::new();
                    for (name, schema, description) in fields {
                        properties.insert(name.to_owned(), describe(schema, description));
                    }
                    let required: Vec<Value> =
                        if all_required { properties.keys().map(|k| Value::String(k.clone())).collect() } else { Vec::new() };
                    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": !closed})
                }),
        ]
    })
}

fn tool_list() -> impl Strategy<Value = Vec<SdkToolSchema>> {
    let tool = (schema(), prop::option::of(schema()), prop::option::of(prop::sample::select(DESCRIPTIONS.to_vec())));
    (prop::sample::subsequence(NAMES.to_vec(), 0..8), prop::collection::vec(tool, 8)).prop_map(|(names, tools)| {
        names
            .into_iter()
            .zip(tools)
            .map(|(name, (parameters, output, description))| SdkToolSchema {
                name: name.to_owned(),
                description: description.map(str::to_owned),
                parameters,
                output,
            })
            .collect()
    })
}

#[test]
fn renderers_are_total_deterministic_and_python_parses() {
    let mut runner = TestRunner::new(Config { cases: cases(), ..Config::default() });
    let strategy = (tool_list(), any::<u64>()).prop_flat_map(|(tools, _)| {
        let shuffled = Just(tools.clone()).prop_shuffle();
        (Just(tools), shuffled)
    });
    let python_sections = std::cell::RefCell::new(Vec::new());
    let result = runner.run(&strategy, |(tools, shuffled)| {
        let typescript = render_tools_sdk(&tools);
        let python = render_tools_sdk_py(&tools);
        prop_assert_eq!(&typescript, &render_tools_sdk(&shuffled));
        prop_assert_eq!(&python, &render_tools_sdk_py(&shuffled));
        prop_assert!(typescript.starts_with("## Writing code for run_code") && typescript.ends_with("\n```"));
        let errors = ts_parse_errors(ts_block(&typescript));
        prop_assert!(errors.is_empty(), "the TypeScript block does not parse: {:?}\n{}", errors, ts_block(&typescript));
        python_sections.borrow_mut().push(python);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    check_python_parses(&python_sections.into_inner());
}

/// Run `ast.parse` on the fenced block of every section in one interpreter.
fn check_python_parses(sections: &[String]) {
    let blocks: Vec<&str> = sections
        .iter()
        .map(|s| s.split_once("```python\n").and_then(|(_, rest)| rest.strip_suffix("\n```")).unwrap_or(""))
        .collect();
    let script = "import ast, json, sys\nbad = []\nfor i, code in enumerate(json.load(sys.stdin)):\n    try:\n        ast.parse(code)\n    except SyntaxError as e:\n        bad.append(f'case {i}: {e}\\n{code}')\nprint('\\n\\n'.join(bad))\nsys.exit(1 if bad else 0)\n";
    let child = Command::new("python3").args(["-c", script]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn();
    let Ok(mut child) = child else {
        eprintln!("python3 not found: skipping the Python parse check");
        return;
    };
    let payload = serde_json::to_vec(&blocks).unwrap_or_default();
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(&payload);
    }
    let output = child.wait_with_output().unwrap_or_else(|e| panic!("python3: {e}"));
    assert!(output.status.success(), "unparseable Python SDK:\n{}", String::from_utf8_lossy(&output.stdout));
}

/// The declarations inside the section's ```ts fence (empty when the fence is missing, which then fails
/// the parse check's caller through the prefix assertion).
fn ts_block(section: &str) -> &str {
    section.split_once("```ts\n").and_then(|(_, rest)| rest.strip_suffix("\n```")).unwrap_or("")
}

/// Every syntax error swc reports for `code` parsed as a TypeScript module, recovered ones included.
fn ts_parse_errors(code: &str) -> Vec<String> {
    use swc_common::BytePos;
    use swc_ecma_parser::{Parser, StringInput, Syntax, TsSyntax};

    let end = u32::try_from(code.len()).unwrap_or(u32::MAX - 1).saturating_add(1);
    let input = StringInput::new(code, BytePos(1), BytePos(end));
    let mut parser = Parser::new(Syntax::Typescript(TsSyntax::default()), input, None);
    let result = parser.parse_typescript_module();
    let mut errors: Vec<String> = parser.take_errors().into_iter().map(|e| format!("{:?}", e.into_kind())).collect();
    if let Err(e) = result {
        errors.push(format!("{:?}", e.into_kind()));
    }
    errors
}

/// The parse check has teeth: breaking a rendered block in the ways a renderer bug would (an unescaped
/// `*/` in a doc line, an unquoted exotic key, a stray or a missing brace) is reported.
#[test]
fn the_typescript_check_rejects_broken_blocks() {
    let tools = vec![SdkToolSchema {
        name: "my-tool".into(),
        description: Some("ends */ here".into()),
        parameters: json!({"type": "object", "properties": {"a b": {"type": "string"}, "n": {"type": "integer"}}, "required": ["n"]}),
        output: None,
    }];
    let section = render_tools_sdk(&tools);
    let block = ts_block(&section);
    assert_eq!(ts_parse_errors(block), Vec::<String>::new(), "{block}");
    let broken = [
        block.replace("*\\/", "*/"),
        block.replace("\"my-tool\"", "my-tool"),
        block.replace("\"a b\"?", "a b?"),
        block.replacen("interface ToolOutputMap {", "interface ToolOutputMap {{", 1),
        block.replacen('}', "", 1),
    ];
    for text in broken {
        assert_ne!(text, block, "the mutation did not apply");
        assert!(!ts_parse_errors(&text).is_empty(), "accepted a broken block:\n{text}");
    }
}

/// SDK-026: outside a render the Python codegen has no naming context, so every object is
/// `dict[str, Any]`; the TypeScript one renders at indentation 0; both degrade what is outside the subset.
#[test]
fn codegens_outside_a_render() {
    let object = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "integer", "enum": [1, 2]}}}, "required": ["a"]});
    assert_eq!(json_schema_to_ts(&object), "{\n  a: string;\n  b?: (1 | 2)[];\n} & Record<string, JsonValue>");
    assert_eq!(json_schema_to_py(&object), "dict[str, Any]");
    let union = json!({"oneOf": [object, {"type": "null"}]});
    assert_eq!(json_schema_to_ts(&union), "{\n  a: string;\n  b?: (1 | 2)[];\n} & Record<string, JsonValue> | null");
    assert_eq!(json_schema_to_py(&union), "dict[str, Any] | None");
    let closed = json!({"type": "object", "additionalProperties": false});
    assert_eq!(json_schema_to_ts(&closed), "Record<string, never>");
    assert_eq!(json_schema_to_py(&closed), "dict[str, Any]");
    for degraded in [json!({"$ref": "#"}), Value::Null, json!([1]), json!({"type": "string", "pattern": "a"})] {
        assert_eq!(json_schema_to_ts(&degraded), "unknown");
        assert_eq!(json_schema_to_py(&degraded), "Any");
    }
}
