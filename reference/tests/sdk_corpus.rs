//! The SDK corpus (`corpus/sdk/*.json`): for every tool set, the TypeScript and Python sections
//! rendered here are byte-identical to the texts upstream generated; plus one insta snapshot per
//! corpus file (the input's tool names and path in the snapshot header), except the 100,000-level
//! files in `NOT_SNAPSHOTTED`.

use std::path::{Path, PathBuf};

use dsh_tools::sdk::{SdkToolSchema, parse_tool_list, render_tools_sdk, render_tools_sdk_py};
use dsh_tools::value::dismantle;
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
    // The deep files nest 200,000 JSON levels (a oneOf level is an object in an array), more than
    // serde_json's recursive parse fits in a fixed stack: serde_stacker grows it on the heap.
    let mut value = Value::deserialize(serde_stacker::Deserializer::new(&mut deserializer))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut take = |key: &str| match value.get_mut(key).map(Value::take) {
        Some(Value::String(s)) => s,
        _ => panic!("{}: missing \"{key}\" text", path.display()),
    };
    let typescript = take("typescript");
    let python = take("python");
    let tools = parse_tool_list(value).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Case { tools, typescript, python }
}

impl Drop for Case {
    /// `serde_json::Value` drops recursively; the deep schemas are dismantled with a work stack.
    fn drop(&mut self) {
        for tool in self.tools.drain(..) {
            dismantle(tool.parameters);
            if let Some(output) = tool.output {
                dismantle(output);
            }
        }
    }
}

fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// Where two texts first differ, as a short line-level report (a window of long lines: the deep
/// files have lines of a megabyte).
fn first_difference(expected: &str, actual: &str) -> String {
    for (index, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
        if e != a {
            let column = e.char_indices().zip(a.chars()).find(|((_, x), y)| x != y).map_or(e.len().min(a.len()), |((i, _), _)| i);
            let window = |line: &str| -> String {
                let start = (0..=column.saturating_sub(80)).rev().find(|&i| line.is_char_boundary(i)).unwrap_or(0);
                line[start..].chars().take(160).collect()
            };
            return format!(
                "line {}, byte {column}:\n  upstream: {:?}\n  ours:     {:?}",
                index + 1,
                window(e),
                window(a)
            );
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

/// Corpus files with no snapshot: their rendered text is megabytes of one repeated shape, which a
/// snapshot cannot make reviewable; `corpus_matches_upstream_bytes` compares them with upstream's bytes.
const NOT_SNAPSHOTTED: &[&str] = &["deep_chain.json"];

#[test]
fn corpus_snapshots() {
    on_big_stack(|| {
        insta::glob!("../../corpus/sdk", "*.json", |path| {
            if path.file_name().is_some_and(|name| NOT_SNAPSHOTTED.iter().any(|skip| name == *skip)) {
                return;
            }
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
