//! Conventions as tests: every `.rs` file starts with `//!`; every rule of `spec/rules` is cited by a
//! scenario or a `corpus/validation` group, or marked `observable: false` with a reason; every rule id
//! cited by a scenario, a corpus group, `spec/SEMANTICS.md` or a `Spec:` line in code exists; no two
//! rules share an id; and the import layering of ARCHITECTURE.md's Architecture Invariant: `dsh-tools`'s top-level modules
//! import only from lower layers ([`REFERENCE_LAYERS`]), and no crate has an import circle among the
//! modules of one parent.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "tidy/imports.rs"]
mod imports;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// `dsh-tools`'s layers, bottom first: a top-level module may import (through `crate::`) only modules of
/// a lower layer — never one of its own layer, never a higher one, never an item through the crate root's
/// re-exports. A new module goes into this table (ARCHITECTURE.md says why each layer sits where it does).
const REFERENCE_LAYERS: &[(&str, &[&str])] = &[
    ("vocabulary", &["value", "scope", "callback", "presentation", "content", "views"]),
    ("errors and calls", &["error", "execution"]),
    ("results, schemas, SDK text", &["result", "schema", "sdk"]),
    ("definitions", &["definition"]),
    ("typed tool builder, MCP import and provider formats", &["typed", "mcp", "provider"]),
    ("hooks and approval", &["hooks", "approval"]),
    ("registry and prompt service", &["registry", "prompt"]),
    ("executor seam", &["executor"]),
    ("pipeline stages", &["pipeline"]),
    ("run_code transport and code runtimes", &["code"]),
    ("prompt contribution", &["contribution"]),
    ("facade", &["runtime"]),
    ("ready-made wrappers, the turn executor and the in-flight bodies, over the facade", &["wrappers", "turn", "bodies"]),
];

/// Every import of a top-level module that breaks the layer table, and every top-level module the table
/// does not place.
fn layer_violations(graph: &imports::Graph, layers: &[(&str, &[&str])]) -> Vec<String> {
    let layer_of = |module: &str| layers.iter().position(|(_, modules)| modules.contains(&module));
    let mut problems = Vec::new();
    for module in graph.children(&[]) {
        if layer_of(&module).is_none() {
            problems.push(format!("top-level module `{module}` is not in the layer table"));
        }
    }
    for import in &graph.imports {
        let (Some(from), Some(to)) = (import.from.first(), import.to.first()) else { continue };
        if from == to {
            continue;
        }
        let at = format!("{}:{}", import.file, import.line);
        let path = import.to.join("::");
        match (layer_of(from), layer_of(to)) {
            (Some(a), Some(b)) if b >= a => problems.push(format!(
                "{at}: `{from}` ({}) imports `crate::{path}` from `{to}` ({}), which is not a lower layer",
                layers[a].0, layers[b].0
            )),
            (Some(_), None) if !graph.children(&[]).contains(to) => {
                problems.push(format!("{at}: `{from}` imports `crate::{path}` through the crate root; name its module"))
            }
            _ => {}
        }
    }
    problems
}

fn crate_graph(krate: &str) -> imports::Graph {
    imports::graph(&imports::sources(&Path::new(ROOT).join(krate).join("src"), Path::new(ROOT)))
}

/// Files under `dir` with extension `ext`, skipping build output, dependencies and VCS data.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | "node_modules" | ".git" | ".node") && !name.starts_with('.') {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn rel(path: &Path) -> String {
    path.strip_prefix(ROOT).unwrap_or(path).display().to_string()
}

/// Rule ids (`AREA-NNN`) appearing in a text.
fn rule_ids_in(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for token in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        if let Some((area, number)) = token.split_once('-') {
            let area_ok = !area.is_empty() && area.chars().all(|c| c.is_ascii_uppercase());
            let number_ok = number.len() >= 3 && number.chars().all(|c| c.is_ascii_digit());
            if area_ok && number_ok {
                ids.push(token.to_owned());
            }
        }
    }
    ids
}

struct Catalog {
    /// id → (file, observable, reason present)
    rules: BTreeMap<String, (String, bool, bool)>,
    problems: Vec<String>,
}

fn catalog() -> Catalog {
    let mut catalog = Catalog { rules: BTreeMap::new(), problems: Vec::new() };
    for path in files(&Path::new(ROOT).join("spec/rules"), "yaml") {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let doc: serde_yaml::Value = match serde_yaml::from_str(&text) {
            Ok(doc) => doc,
            Err(e) => {
                catalog.problems.push(format!("{}: {e}", rel(&path)));
                continue;
            }
        };
        for rule in doc.get("rules").and_then(|r| r.as_sequence()).into_iter().flatten() {
            let Some(id) = rule.get("id").and_then(|i| i.as_str()) else {
                catalog.problems.push(format!("{}: a rule without an id", rel(&path)));
                continue;
            };
            let observable = rule.get("observable").and_then(|o| o.as_bool()).unwrap_or(true);
            let reason = rule.get("reason").and_then(|r| r.as_str()).is_some_and(|r| !r.trim().is_empty());
            if let Some((first, ..)) = catalog.rules.insert(id.to_owned(), (rel(&path), observable, reason)) {
                catalog.problems.push(format!("{}: rule id {id} is also defined in {first}", rel(&path)));
            }
        }
    }
    catalog
}

/// Rule ids cited by each scenario file, read through the suite's own loader (the harness's YAML
/// reader, which takes the deep nesting some scenarios need): a file that does not load fails this test
/// rather than being skipped.
fn scenario_citations() -> BTreeMap<String, Vec<String>> {
    let mut cited: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let suite = dsh_conformance::loader::load_suite(&Path::new(ROOT).join("spec"));
    let errors: Vec<String> = suite.errors.iter().map(ToString::to_string).collect();
    assert!(errors.is_empty(), "spec/ does not load:\n{}", errors.join("\n"));
    for loaded in &suite.scenarios {
        cited.entry(loaded.file.display().to_string()).or_default().extend(loaded.scenario.rules.iter().cloned());
    }
    // Corpus groups cite rules too: some rules (stack safety at 100,000 levels, the validator's
    // lossless-JSON messages) are only observable through data-driven corpus cases.
    let corpus = dsh_conformance::corpus::load_validation_corpus(
        &Path::new(ROOT).join("corpus/validation"),
        "corpus/validation",
        None,
    );
    assert!(corpus.errors.is_empty(), "corpus/validation does not load: {:?}", corpus.errors);
    for group in &corpus.groups {
        cited.entry(group.id.clone()).or_default().extend(group.rules.iter().cloned());
    }
    cited
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let missing: Vec<String> = files(Path::new(ROOT), "rs")
        .into_iter()
        .filter(|p| !std::fs::read_to_string(p).unwrap_or_default().starts_with("//!"))
        .map(|p| rel(&p))
        .collect();
    assert!(missing.is_empty(), "files not starting with `//!`:\n{}", missing.join("\n"));
}

#[test]
fn rule_ids_are_unique_and_catalogs_parse() {
    let catalog = catalog();
    assert!(catalog.problems.is_empty(), "{}", catalog.problems.join("\n"));
}

#[test]
fn every_rule_is_covered_or_marked_unobservable() {
    let catalog = catalog();
    let cited: BTreeSet<String> = scenario_citations().into_values().flatten().collect();
    let mut problems = Vec::new();
    for (id, (file, observable, reason)) in &catalog.rules {
        if !observable && !reason {
            problems.push(format!("{file}: {id} is `observable: false` without a `reason`"));
        }
        if *observable && !cited.contains(id) {
            problems.push(format!("{file}: {id} has no scenario citing it and is not `observable: false`"));
        }
    }
    assert!(problems.is_empty(), "{} rule(s):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_cited_rule_exists() {
    let catalog = catalog();
    let mut problems = Vec::new();
    for (file, ids) in scenario_citations() {
        for id in ids.iter().filter(|id| !catalog.rules.contains_key(*id)) {
            problems.push(format!("{file}: cites unknown rule {id}"));
        }
    }
    // spec/SEMANTICS.md is normative prose: every rule id it names must exist.
    let semantics = Path::new(ROOT).join("spec/SEMANTICS.md");
    let text = std::fs::read_to_string(&semantics).unwrap_or_default();
    assert!(text.len() > 1000, "{} is missing or empty", rel(&semantics));
    for (n, line) in text.lines().enumerate() {
        for id in rule_ids_in(line).iter().filter(|id| !catalog.rules.contains_key(*id)) {
            problems.push(format!("{}:{}: cites unknown rule {id}", rel(&semantics), n + 1));
        }
    }
    for path in files(Path::new(ROOT), "rs") {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            let Some(at) = line.find("Spec:") else { continue };
            for id in rule_ids_in(&line[at..]).iter().filter(|id| !catalog.rules.contains_key(*id)) {
                problems.push(format!("{}:{}: `Spec:` cites unknown rule {id}", rel(&path), n + 1));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn rule_id_scanner_finds_ids() {
    assert_eq!(rule_ids_in("Spec: PIPE-004, REG-001; not x-001 or AB-12"), vec!["PIPE-004", "REG-001"]);
}

#[test]
fn reference_modules_import_only_lower_layers() {
    let problems = layer_violations(&crate_graph("reference"), REFERENCE_LAYERS);
    assert!(problems.is_empty(), "{} layering problem(s):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut problems = Vec::new();
    for krate in ["reference", "conformance", "harness"] {
        let graph = crate_graph(krate);
        assert!(graph.modules.len() > 10 && graph.imports.len() > 50, "{krate}: the scanner found too little");
        problems.extend(graph.sibling_cycles().into_iter().map(|p| format!("{krate}: {p}")));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checks catch what they are for: a back-edge added to the bottom layer, an import through the
/// crate root, and a circle added between two conformance modules — in code, not in test-only items.
#[test]
fn a_deliberate_back_edge_or_circle_fails() {
    let root = Path::new(ROOT);
    let mut sources = imports::sources(&root.join("reference/src"), root);
    let value = sources.iter_mut().find(|s| s.module == ["value"]).unwrap();
    value.text.push_str("\n#[cfg(test)]\nuse crate::runtime::ToolsConfig;\nfn _f(_: crate::runtime::ToolRuntime) {}\n");
    let lines = value.text.lines().count();
    let scope = sources.iter_mut().find(|s| s.module == ["scope"]).unwrap();
    scope.text.push_str("\nuse crate::ToolRuntime;\n");
    let problems = layer_violations(&imports::graph(&sources), REFERENCE_LAYERS);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].contains("reference/src/scope.rs:") && problems[0].contains("through the crate root"), "{problems:#?}");
    assert!(problems[1].starts_with(&format!("reference/src/value.rs:{lines}: `value` (vocabulary) imports `crate::runtime::ToolRuntime`")), "{problems:#?}");

    let mut sources = imports::sources(&root.join("conformance/src"), root);
    assert!(imports::graph(&sources).sibling_cycles().is_empty());
    let json = sources.iter_mut().find(|s| s.module == ["json"]).unwrap();
    json.text.push_str("\nuse crate::{checker::{self, CheckOptions}};\n");
    let cycles = imports::graph(&sources).sibling_cycles();
    let direct = "import circle under crate root: checker → json (conformance/src/checker.rs:";
    assert!(cycles.iter().any(|c| c.starts_with(direct) && c.contains("json → checker (conformance/src/json.rs:")), "{cycles:#?}");
}
