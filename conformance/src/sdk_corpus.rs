//! The SDK corpus (`corpus/sdk/*.json`, format in its README): one tool set per file with the exact
//! TypeScript and Python SDK text upstream rc.8 renders for it. [`load_sdk_corpus`] reads and checks the
//! files (a bad file is [`LoadError`]s, one `ERROR(scenario)` trial, never a stop) into one [`SdkCase`] per
//! file and language; [`run_case`] sends the tool set to a subject with `sdk/render` in its own session
//! and compares the text exactly, with a line diff on mismatch. Session handling, outcome checks and the
//! diff are the validation corpus's and the scenario checker's (`corpus.rs`, `checker.rs`).
//!
//! Spec: files may cite rules through an optional `rules` list, checked against the catalog (the SDK area is
//! `spec/rules/sdk.yaml`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::checker::{CheckOptions, Stop, run_session};
use crate::corpus::{Problem, judge_outcome, json_files, no_more, take_rules, take_string};
use crate::diff;
use crate::features::SDK;
use crate::json::{self, Deep, deep_clone, dismantle};
use crate::loader::LoadError;
use crate::outcome::TrialRecord;
use crate::protocol::Request;
use crate::subject::{Subject, SubjectInfo};

/// The SDK languages, in trial order: `sdk/render`'s `language` and the corpus file's text keys.
pub const LANGUAGES: [&str; 2] = ["typescript", "python"];

/// One file and language: one trial.
#[derive(Debug)]
pub struct SdkCase {
    /// Trial id: `corpus/sdk/<file stem>#<language>`.
    pub id: String,
    /// Display path of its file.
    pub file: String,
    /// Cited rule ids (optional in the file).
    pub rules: Vec<String>,
    /// `typescript` or `python`.
    pub language: String,
    /// The tool list, sent as it was read.
    pub tools: Deep,
    /// The text upstream rendered.
    pub expected: String,
}

/// Every case that loaded, and every problem, in file order.
#[derive(Debug, Default)]
pub struct SdkCorpus {
    /// Cases of the files that loaded cleanly.
    pub cases: Vec<SdkCase>,
    /// Problems; a file with any contributes no case.
    pub errors: Vec<LoadError>,
}

/// Loads `dir/*.json` in sorted order; `display` is the directory's display name (`corpus/sdk`). Rule ids
/// are checked against `catalog` when it has any rule of the cited area.
pub fn load_sdk_corpus(dir: &Path, display: &str, catalog: Option<&Catalog>) -> SdkCorpus {
    let mut corpus = SdkCorpus::default();
    let (paths, problems) = json_files(dir, display);
    corpus.errors.extend(problems);
    for path in paths {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let shown = format!("{display}/{stem}.json");
        match load_file(&path, &stem, &shown, catalog) {
            Ok(cases) => corpus.cases.extend(cases),
            Err((field, message)) => {
                corpus.errors.push(LoadError { file: PathBuf::from(&shown), line: 1, column: 1, field, message });
            }
        }
    }
    corpus
}

pub(crate) fn load_file(path: &Path, stem: &str, shown: &str, catalog: Option<&Catalog>) -> Result<Vec<SdkCase>, Problem> {
    let text = crate::files::read_text(path).map_err(|e| (String::new(), e.message))?;
    let value = json::parse_line(&text).map_err(|e| (String::new(), format!("not JSON: {e}")))?;
    let Value::Object(mut map) = value else {
        dismantle(value);
        return Err((String::new(), "an SDK corpus file is an object with tools, typescript and python".into()));
    };
    let rules = take_rules(&mut map, catalog)?;
    let mut tools = match map.remove("tools") {
        Some(tools @ Value::Array(_)) => Deep(tools),
        Some(other) => {
            dismantle(other);
            return Err((".tools".into(), "must be a list of tools".into()));
        }
        None => return Err((String::new(), "missing tools".into())),
    };
    let mut texts = Vec::new();
    for language in LANGUAGES {
        let text = take_string(&mut map, language, "")?.ok_or((String::new(), format!("missing {language}")))?;
        texts.push((language, text));
    }
    no_more(map, "")?;
    let mut cases = Vec::new();
    let last = texts.len().saturating_sub(1);
    for (n, (language, expected)) in texts.into_iter().enumerate() {
        // The last language takes the tools; the others get copies.
        let tools = if n == last { std::mem::take(&mut tools.0) } else { deep_clone(&tools.0) };
        cases.push(SdkCase {
            id: format!("corpus/sdk/{stem}#{language}"),
            file: shown.to_owned(),
            rules: rules.clone(),
            language: language.to_owned(),
            tools: Deep(tools),
            expected,
        });
    }
    Ok(cases)
}

/// `SKIP(not-applicable)` when the subject lacks the `sdk` feature or the `dsh-tools-0.1` profile.
pub fn applicability(info: &SubjectInfo) -> Option<String> {
    crate::corpus::corpus_applicability(info, SDK)
}

/// Skips (see [`applicability`]) or runs the case.
pub fn check_case(subject: &mut dyn Subject, info: &SubjectInfo, case: SdkCase, opts: &CheckOptions) -> TrialRecord {
    crate::corpus::skip_or_run(applicability(info), || run_case(subject, case, opts))
}

/// Runs one case in its own session (named after the case id): `session/open` with an empty setup,
/// `sdk/render`, `session/close`. The outcome must be ok and the text exactly upstream's. The case is
/// consumed: its tools go into the request rather than being copied.
pub fn run_case(subject: &mut dyn Subject, case: SdkCase, opts: &CheckOptions) -> TrialRecord {
    let SdkCase { id, language, mut tools, expected, .. } = case;
    let session = id.as_str();
    run_session(subject, session, opts, |run| {
        let open = run.send("session/open", Request { method: "session/open", params: json!({ "session": session, "setup": {} }) })?;
        dismantle(open);
        // Moved in after `json!`: the macro would copy a `Value` operand through `to_value`, recursively, and
        // the deepest tool sets are 200,000 levels.
        let mut params = json!({ "session": session, "language": language });
        params["tools"] = std::mem::take(&mut tools.0);
        let result = Deep(run.send("sdk/render", Request { method: "sdk/render", params })?);
        judge_outcome("sdk/render", None, &result.0)?;
        let Some(text) = result.0.get("text").and_then(Value::as_str) else {
            return Err(Stop::fail("sdk/render: the result has no text".into()));
        };
        if text == expected {
            return Ok(());
        }
        Err(Stop::fail(format!("sdk/render: the {} text differs from upstream's\n{}", language, text_diff(&expected, text))))
    })
}

/// A line diff; when the lines agree (the texts differ only in line endings or a final newline), the
/// texts' ends, escaped.
fn text_diff(expected: &str, actual: &str) -> String {
    let lines = diff::unified(expected, actual);
    if lines.lines().any(|l| l.starts_with(['-', '+']) && !l.starts_with("---") && !l.starts_with("+++")) {
        return lines;
    }
    let tail = |s: &str| {
        let start = s.char_indices().rev().nth(39).map_or(0, |(i, _)| i);
        json::write(&Value::String(s[start..].to_owned()), false)
    };
    format!("the lines agree; the texts end differently:\n  expected …{}\n  actual   …{}", tail(expected), tail(actual))
}
