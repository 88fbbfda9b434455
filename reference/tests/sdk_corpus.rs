//! The SDK corpus (`corpus/sdk/*.json`): for every tool set, the TypeScript and Python sections
//! rendered here are byte-identical to the texts upstream generated; plus one insta snapshot per
//! corpus file (the input's tool names and path in the snapshot header).

use std::path::{Path, PathBuf};

use dsh_tools::sdk::{SdkToolSchema, parse_tool_list, render_tools_sdk, render_tools_sdk_py};
use serde::Deserialize;
use serde_json::Value;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/sdk")
}

struct Case {
    tools: Vec<SdkToolSchema>,
    typescript: String,
    python: String,
}

fn load(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    deserializer.disable_recursion_limit();
    let mut value = Value::deserialize(&mut deserializer).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut take = |key: &str| match value.get_mut(key).map(Value::take) {
        Some(Value::String(s)) => s,
        _ => panic!("{}: missing \"{key}\" text", path.display()),
    };
    let typescript = take("typescript");
    let python = take("python");
    let tools = parse_tool_list(value).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Case { tools, typescript, python }
}

fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// Where two texts first differ, as a short line-level report.
fn first_difference(expected: &str, actual: &str) -> String {
    for (index, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
        if e != a {
            return format!("line {}:\n  upstream: {e:?}\n  ours:     {a:?}", index + 1);
        }
    }
    format!("line counts differ: upstream {} lines, ours {}", expected.lines().count(), actual.lines().count())
}

/// Big-stack thread: the deep cases parse and drop recursively.
fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .and_then(|h| h.join().map_err(|_| std::io::Error::other("corpus thread panicked")))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn corpus_matches_upstream_bytes() {
    let files = corpus_files();
    assert!(files.len() >= 10, "corpus/sdk has only {} files", files.len());
    let failures = on_big_stack(move || {
        let mut failures = Vec::new();
        for path in files {
            let case = load(&path);
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let typescript = render_tools_sdk(&case.tools);
            if typescript != case.typescript {
                failures.push(format!("{name} (typescript) {}", first_difference(&case.typescript, &typescript)));
            }
            let python = render_tools_sdk_py(&case.tools);
            if python != case.python {
                failures.push(format!("{name} (python) {}", first_difference(&case.python, &python)));
            }
        }
        failures
    });
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn corpus_snapshots() {
    on_big_stack(|| {
        insta::glob!("../../corpus/sdk", "*.json", |path| {
            let case = load(path);
            let names: Vec<String> = case.tools.iter().map(|t| serde_json::to_string(&t.name).unwrap_or_default()).collect();
            let rendered = format!(
                "===== typescript =====\n{}\n===== python =====\n{}\n",
                render_tools_sdk(&case.tools),
                render_tools_sdk_py(&case.tools)
            );
            insta::with_settings!({
                description => format!("tools ({}): {}", names.len(), names.join(", ")),
                omit_expression => true,
            }, {
                insta::assert_snapshot!(rendered);
            });
        });
    });
}
