//! Loads and checks the suite: `rules/*.yaml` into a [`Catalog`], `scenarios/**/*.yaml` into scenarios,
//! in sorted path order. Each file is parsed (`yaml`), validated against its JSON Schema, deserialized,
//! then cross-checked (unknown rule ids, duplicate scenario or rule ids). Every problem is a
//! [`LoadError`] with file, line, column and field; a bad file never stops the others, and a file with
//! any error contributes no scenario (the harness turns it into one `ERROR(scenario)` trial) — except a
//! duplicate scenario id, which drops only the scenario that repeats it. Files are
//! found and read through `files.rs` (links followed, FIFOs, devices and oversized files refused). A
//! scenario citing a rule that is unknown because a rules file did not load says so, naming that file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use jsonschema::paths::LocationSegment;
use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::catalog::{Catalog, Rule, RuleFile};
use crate::scenario::{Family, Scenario};
use crate::schemas;
use crate::yaml::{self, Positions, push_pointer};

/// One problem in one spec file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// Display path: the spec directory's name joined with the path inside it (`spec/scenarios/a.yaml`).
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The field, e.g. `steps[3].expect`; empty for the whole file.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.column)?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for LoadError {}

/// A scenario that loaded cleanly.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedScenario {
    /// The scenario.
    pub scenario: Scenario,
    /// Its file (display path).
    pub file: PathBuf,
    /// The line where it starts.
    pub line: usize,
}

/// The loaded suite.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    /// Every rule that loaded.
    pub catalog: Catalog,
    /// Every scenario that loaded, in file order.
    pub scenarios: Vec<LoadedScenario>,
    /// Every problem found, in file order.
    pub errors: Vec<LoadError>,
}

impl Suite {
    /// The errors grouped by file (one `ERROR(scenario)` trial per file).
    pub fn errors_by_file(&self) -> BTreeMap<&Path, Vec<&LoadError>> {
        let mut by: BTreeMap<&Path, Vec<&LoadError>> = BTreeMap::new();
        for e in &self.errors {
            by.entry(e.file.as_path()).or_default().push(e);
        }
        by
    }
}

/// Loads `spec_root/rules/*.yaml` and `spec_root/scenarios/**/*.yaml`.
pub fn load_suite(spec_root: &Path) -> Suite {
    let display_root = spec_root.file_name().map(PathBuf::from).unwrap_or_default();
    let mut suite = Suite::default();
    let mut first_rule: BTreeMap<String, (PathBuf, usize, usize)> = BTreeMap::new();

    let mut broken_rules: Vec<String> = Vec::new();
    for (path, rel) in list_yaml(spec_root, "rules", false, &mut suite.errors, &display_root) {
        let file = display_root.join(&rel);
        let before = suite.errors.len();
        match read_file(&file, &path) {
            Ok(text) => load_rules_text(&file, &text, &mut suite.catalog, &mut first_rule, &mut suite.errors),
            Err(e) => suite.errors.push(e),
        }
        if suite.errors.len() > before {
            broken_rules.push(file.display().to_string());
        }
    }

    let mut first_scenario: BTreeMap<String, (PathBuf, usize, usize)> = BTreeMap::new();
    for (path, rel) in list_yaml(spec_root, "scenarios", true, &mut suite.errors, &display_root) {
        let file = display_root.join(&rel);
        let text = match read_file(&file, &path) {
            Ok(t) => t,
            Err(e) => {
                suite.errors.push(e);
                continue;
            }
        };
        match load_scenarios_text(&file, &text, &suite.catalog, &mut first_scenario) {
            Ok((loaded, duplicates)) => {
                suite.scenarios.extend(loaded);
                suite.errors.extend(duplicates);
            }
            Err(mut errors) => {
                if !broken_rules.is_empty() {
                    for e in errors.iter_mut().filter(|e| e.message.starts_with("unknown rule id")) {
                        e.message = format!(
                            "{} (it may be defined in {}, which did not load: fix that file first)",
                            e.message,
                            broken_rules.join(", ")
                        );
                    }
                }
                suite.errors.extend(errors);
            }
        }
    }
    suite
}

/// Reads one spec file (`files::read_text`), an error naming `file` (its display path).
pub fn read_file(file: &Path, path: &Path) -> Result<String, LoadError> {
    crate::files::read_text(path).map_err(|e| LoadError {
        file: file.to_path_buf(),
        line: e.line,
        column: e.column,
        field: String::new(),
        message: e.message,
    })
}

/// Parses, validates and checks one scenario file. `seen` holds the ids accepted so far (with where);
/// the ids of this file are added to it only when the file is accepted. A scenario whose id was taken
/// before (in this file or an earlier one) is dropped alone, with an error at its `id` line; any other
/// error rejects the whole file (`Err`). `Ok` holds the scenarios kept and the duplicate-id errors.
pub fn load_scenarios_text(
    file: &Path,
    text: &str,
    catalog: &Catalog,
    seen: &mut BTreeMap<String, (PathBuf, usize, usize)>,
) -> Result<(Vec<LoadedScenario>, Vec<LoadError>), Vec<LoadError>> {
    let (value, positions) = parse_and_validate(file, text, schemas::scenario())?;
    let errors_at = |pointer: &str, field: &str, message: String| {
        let pos = positions.field(pointer);
        LoadError { file: file.to_path_buf(), line: pos.line, column: pos.column, field: field.to_string(), message }
    };
    let malformed = crate::nested::malformed(&value);
    if !malformed.is_empty() {
        return Err(malformed.into_iter().map(|(pointer, field, message)| errors_at(&pointer, &field, message)).collect());
    }
    let family = value.get("scenarios").is_some();
    let scenarios = if family {
        serde_json::from_value::<Family>(value).map(|f| f.scenarios)
    } else {
        serde_json::from_value::<Scenario>(value).map(|s| vec![s])
    };
    let scenarios = scenarios.map_err(|e| vec![errors_at("", "", e.to_string())])?;

    let mut errors = Vec::new();
    let mut duplicates = Vec::new();
    let mut loaded = Vec::new();
    let mut mine: BTreeMap<String, (PathBuf, usize, usize)> = BTreeMap::new();
    for (i, scenario) in scenarios.into_iter().enumerate() {
        let (base, prefix) = if family { (format!("/scenarios/{i}"), format!("scenarios[{i}].")) } else { (String::new(), String::new()) };
        for (j, rule) in scenario.rules.iter().enumerate() {
            if !catalog.contains(rule) {
                let pos = positions.node(&format!("{base}/rules/{j}")).value;
                errors.push(LoadError {
                    file: file.to_path_buf(),
                    line: pos.line,
                    column: pos.column,
                    field: format!("{prefix}rules[{j}]"),
                    message: format!("unknown rule id {rule:?}"),
                });
            }
        }
        let id_pos = positions.field(&format!("{base}/id"));
        if let Some((f, l, c)) = seen.get(&scenario.id).or_else(|| mine.get(&scenario.id)) {
            duplicates.push(LoadError {
                file: file.to_path_buf(),
                line: id_pos.line,
                column: id_pos.column,
                field: format!("{prefix}id"),
                message: format!(
                    "duplicate scenario id {:?} (first at {}:{l}:{c}); this one is not run",
                    scenario.id,
                    f.display()
                ),
            });
            continue;
        }
        mine.insert(scenario.id.clone(), (file.to_path_buf(), id_pos.line, id_pos.column));
        let line = positions.node(&base).value.line;
        loaded.push(LoadedScenario { scenario, file: file.to_path_buf(), line });
    }
    if errors.is_empty() {
        seen.extend(mine);
        Ok((loaded, duplicates))
    } else {
        errors.extend(duplicates);
        Err(errors)
    }
}

/// Parses, validates and adds one catalog file's rules; a duplicate or mis-prefixed id is an error and
/// that rule is left out, the others of the file still load.
pub fn load_rules_text(
    file: &Path,
    text: &str,
    catalog: &mut Catalog,
    seen: &mut BTreeMap<String, (PathBuf, usize, usize)>,
    errors: &mut Vec<LoadError>,
) {
    let (value, positions) = match parse_and_validate(file, text, schemas::rules()) {
        Ok(v) => v,
        Err(e) => {
            errors.extend(e);
            return;
        }
    };
    let rule_file: RuleFile = match serde_json::from_value(value) {
        Ok(r) => r,
        Err(e) => {
            errors.push(whole_file(file, e.to_string()));
            return;
        }
    };
    let entries = rule_file.rules.clone();
    for (i, entry) in entries.into_iter().enumerate() {
        let pos = positions.field(&format!("/rules/{i}/id"));
        let err = |message: String| LoadError {
            file: file.to_path_buf(),
            line: pos.line,
            column: pos.column,
            field: format!("rules[{i}].id"),
            message,
        };
        if !entry.id.starts_with(&format!("{}-", rule_file.area)) {
            errors.push(err(format!("rule id {:?} does not start with the file's area {:?}", entry.id, rule_file.area)));
            continue;
        }
        if let Some((f, l, c)) = seen.get(&entry.id) {
            errors.push(err(format!("duplicate rule id {:?} (first at {}:{l}:{c})", entry.id, f.display())));
            continue;
        }
        seen.insert(entry.id.clone(), (file.to_path_buf(), pos.line, pos.column));
        let rule = Rule::resolve(&rule_file, entry, file.to_path_buf(), pos.line);
        catalog.rules.insert(rule.id.clone(), rule);
    }
}

/// YAML → value → schema. Schema errors come back sorted by position.
fn parse_and_validate(
    file: &Path,
    text: &str,
    validator: Result<&'static Validator, String>,
) -> Result<(Value, Positions), Vec<LoadError>> {
    let doc = yaml::parse(text).map_err(|e| {
        vec![LoadError {
            file: file.to_path_buf(),
            line: e.pos.line,
            column: e.pos.column,
            field: String::new(),
            message: format!("YAML syntax: {}", e.message),
        }]
    })?;
    let validator = validator.map_err(|m| vec![whole_file(file, format!("harness: {m}"))])?;
    let mut errors = Vec::new();
    for error in validator.iter_errors(&doc.value) {
        let mut pointer = String::new();
        let mut field = String::new();
        for segment in error.instance_path().iter() {
            match segment {
                LocationSegment::Property(p) => {
                    push_pointer(&mut pointer, &p);
                    if !field.is_empty() {
                        field.push('.');
                    }
                    field.push_str(&p);
                }
                LocationSegment::Index(i) => {
                    push_pointer(&mut pointer, &i.to_string());
                    field.push_str(&format!("[{i}]"));
                }
            }
        }
        let mut push = |pointer: &str, message: String| {
            let pos = doc.positions.field(pointer);
            errors.push(LoadError {
                file: file.to_path_buf(),
                line: pos.line,
                column: pos.column,
                field: field.clone(),
                message,
            });
        };
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    let mut p = pointer.clone();
                    push_pointer(&mut p, key);
                    push(&p, format!("unknown field {key:?}"));
                }
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().map(str::to_string).unwrap_or_else(|| property.to_string());
                push(&pointer, format!("missing field {name:?}"));
            }
            _ => {
                let message = match error.instance().as_ref() {
                    Value::Array(_) | Value::Object(_) => error.masked_with("the value").to_string(),
                    _ => error.to_string(),
                };
                push(&pointer, message);
            }
        }
    }
    if errors.is_empty() {
        Ok((doc.value, doc.positions))
    } else {
        errors.sort_by(|a, b| (a.line, a.column, &a.message).cmp(&(b.line, b.column, &b.message)));
        errors.dedup();
        Err(errors)
    }
}

fn whole_file(file: &Path, message: String) -> LoadError {
    LoadError { file: file.to_path_buf(), line: 1, column: 1, field: String::new(), message }
}

/// Lists `root/dir/**.yaml` (or only the top level), sorted, as (full path, path relative to root)
/// (`files::list`); a `.yml` file, a FIFO, a link loop and the like are errors rather than silently skipped.
fn list_yaml(root: &Path, dir: &str, recursive: bool, errors: &mut Vec<LoadError>, display_root: &Path) -> Vec<(PathBuf, PathBuf)> {
    let (files, problems) = crate::files::list(root, dir, "yaml", recursive, &["yml"]);
    for (rel, e) in problems {
        errors.push(LoadError { file: display_root.join(rel), line: e.line, column: e.column, field: String::new(), message: e.message });
    }
    files
}
