//! Properties of the SDK renderers over generated schemas: they never panic, the text does not
//! depend on the order of the tool list, and the Python section parses (`ast.parse`, all cases in
//! one `python3` run). `PROPTEST_CASES` sets the case count (default 64).
//!
//! TypeScript parse-checking is not done here: `swc_ecma_parser` and `oxc_parser` each take several
//! minutes to compile on the 2-core machines this project builds on.

use std::io::Write;
use std::process::{Command, Stdio};

use dsh_tools::sdk::{SdkToolSchema, render_tools_sdk, render_tools_sdk_py};
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
