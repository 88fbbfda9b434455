//! Listing the corpora without loading what does not run. [`index_validation_corpus`] and
//! [`index_sdk_corpus`] find the same files, in the same order, and give the same trial ids, files and rules
//! as [`crate::corpus::load_validation_corpus`] and [`crate::sdk_corpus::load_sdk_corpus`]; a file of at
//! least [`LAZY_BYTES`] (the 100,000-deep ones) is only checked for syntax and scanned
//! (`json_scan.rs`) for each item's span, `description` and `rules`, and an item is parsed when its trial
//! runs ([`ListedGroup::load`], [`ListedCase::load`]), so a run filtered to one scenario never builds them.
//!
//! What is checked when: the index checks the file's syntax, its shape (a list of objects; an object with
//! `tools`, `typescript`, `python`), each description and each rule id, as the eager loader does, and
//! reports them the same way (the file is one load error and contributes no trial). The rest of an item
//! (its schema, DSL spec, tests) is checked when it is loaded, and a problem there is that trial's error
//! (`ERROR(scenario)` in the runner) instead of the file's.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::corpus::{self, Group, file_error, json_files, names};
use crate::json::{self, Deep};
use crate::json_scan::{array_items, object_members};
use crate::loader::LoadError;
use crate::sdk_corpus::{self, LANGUAGES, SdkCase};

/// Corpus files at least this large are indexed when listed and their items parsed only when run.
pub const LAZY_BYTES: u64 = 256 << 10;

/// A validation-corpus group as listed: loaded, or indexed in a large file and loaded when it runs.
#[derive(Debug)]
pub enum ListedGroup {
    /// Parsed and checked (a small file).
    Loaded(Group),
    /// Indexed (a large file).
    Deferred(Deferred),
}

/// An SDK-corpus case as listed: loaded, or indexed in a large file and loaded when it runs.
#[derive(Debug)]
pub enum ListedCase {
    /// Parsed and checked (a small file).
    Loaded(SdkCase),
    /// Indexed (a large file).
    Deferred(Deferred),
}

/// An item of a large corpus file: its trial's names and where its bytes are.
#[derive(Debug)]
pub struct Deferred {
    /// The trial id, as the eager loader gives it.
    pub id: String,
    /// Display path of its file.
    pub file: String,
    /// Cited rule ids (already checked against the catalog).
    pub rules: Vec<String>,
    path: PathBuf,
    stem: String,
    /// Validation: the group's position in its file. SDK: the language's position in [`LANGUAGES`].
    index: usize,
    /// Validation: the group's bytes. SDK: the `tools` value's bytes.
    span: Range<usize>,
    /// SDK only: the expected text's bytes (a JSON string).
    expected: Range<usize>,
}

macro_rules! listed_names {
    ($listed:ty) => {
        impl $listed {
            /// The trial id.
            pub fn id(&self) -> &str {
                match self {
                    Self::Loaded(item) => &item.id,
                    Self::Deferred(d) => &d.id,
                }
            }

            /// The display path of its file.
            pub fn file(&self) -> &str {
                match self {
                    Self::Loaded(item) => &item.file,
                    Self::Deferred(d) => &d.file,
                }
            }

            /// The rules it cites.
            pub fn rules(&self) -> &[String] {
                match self {
                    Self::Loaded(item) => &item.rules,
                    Self::Deferred(d) => &d.rules,
                }
            }

            /// The item of a large file this listing defers, if it is one.
            pub fn deferred(&self) -> Option<&Deferred> {
                match self {
                    Self::Loaded(_) => None,
                    Self::Deferred(d) => Some(d),
                }
            }
        }
    };
}
listed_names!(ListedGroup);
listed_names!(ListedCase);

impl ListedGroup {
    /// The group, parsed and checked; the error names the file, the item and what is wrong.
    pub fn load(self) -> Result<Group, String> {
        let d = match self {
            Self::Loaded(group) => return Ok(group),
            Self::Deferred(d) => d,
        };
        let text = d.span_text(d.span.clone())?;
        let item = json::parse_line(&text).map_err(|e| format!("{}: [{}]: not JSON: {e}", d.file, d.index))?;
        drop(text);
        let group = corpus::group(item, d.index, &d.stem, &d.file, None)
            .map_err(|(field, message)| format!("{}:1:1: [{}]{field}: {message}", d.file, d.index))?;
        if group.id != d.id {
            return Err(format!("{}: [{}] changed since it was listed (now {})", d.file, d.index, group.id));
        }
        Ok(group)
    }
}

impl ListedCase {
    /// The case, parsed; the error names the file and what is wrong.
    pub fn load(self) -> Result<SdkCase, String> {
        let d = match self {
            Self::Loaded(case) => return Ok(case),
            Self::Deferred(d) => d,
        };
        let tools = json::parse_line(&d.span_text(d.span.clone())?).map_err(|e| format!("{}: .tools: not JSON: {e}", d.file))?;
        let expected = d.span_text(d.expected.clone()).ok().and_then(|s| serde_json::from_str::<String>(&s).ok());
        let Some(expected) = expected else {
            return Err(format!("{}: the expected text changed since it was listed", d.file));
        };
        let language = LANGUAGES.get(d.index).copied().unwrap_or_default().to_owned();
        let Deferred { id, file, rules, .. } = d;
        Ok(SdkCase { id, file, rules, language, tools: Deep(tools), expected })
    }
}

impl Deferred {
    /// How many bytes of JSON the item is (its validation group, or its SDK case's tools): what running it
    /// builds, sends and takes apart.
    pub fn bytes(&self) -> u64 {
        self.span.len() as u64
    }

    /// The bytes `span` of the file again (read, not kept, between listing and running: only the item's
    /// own bytes, not the whole file per item); an error naming the item when the file changed.
    fn span_text(&self, span: Range<usize>) -> Result<String, String> {
        crate::files::read_span(&self.path, span)
            .map_err(|e| format!("{}: [{}] changed since it was listed: {}", self.file, self.index, e.message))
    }
}

/// Every group of `dir/*.json` as listed, and every problem, in file order; see the module doc.
pub fn index_validation_corpus(dir: &Path, display: &str, catalog: Option<&Catalog>) -> (Vec<ListedGroup>, Vec<LoadError>) {
    let (paths, mut errors) = json_files(dir, display);
    let mut groups = Vec::new();
    let listed = each_file(&paths, |path| {
        let (stem, shown) = names(path, display);
        if is_large(path) {
            index_validation_file(path, &stem, &shown, catalog).map(|d| d.into_iter().map(ListedGroup::Deferred).collect())
        } else {
            corpus::load_file(path, &stem, &shown, catalog).map(|g| g.into_iter().map(ListedGroup::Loaded).collect::<Vec<_>>())
        }
    });
    for listed in listed {
        match listed {
            Ok(listed) => groups.extend(listed),
            Err(problems) => errors.extend(problems),
        }
    }
    (groups, errors)
}

/// Every case of `dir/*.json` as listed, and every problem, in file order; see the module doc.
pub fn index_sdk_corpus(dir: &Path, display: &str, catalog: Option<&Catalog>) -> (Vec<ListedCase>, Vec<LoadError>) {
    let (paths, mut errors) = json_files(dir, display);
    let mut cases = Vec::new();
    let listed = each_file(&paths, |path| {
        let (stem, shown) = names(path, display);
        let listed = if is_large(path) {
            index_sdk_file(path, &stem, &shown, catalog).map(|d| d.into_iter().map(ListedCase::Deferred).collect())
        } else {
            sdk_corpus::load_file(path, &stem, &shown, catalog).map(|c| c.into_iter().map(ListedCase::Loaded).collect::<Vec<_>>())
        };
        listed.map_err(|(field, message)| file_error(&shown, field, message))
    });
    for listed in listed {
        match listed {
            Ok(listed) => cases.extend(listed),
            Err(error) => errors.push(error),
        }
    }
    (cases, errors)
}

/// `f` of every path, in the paths' order, spread over the cores: listing reads and scans tens of
/// megabytes of large files, each on its own. A file whose thread panics (a bug) panics the caller.
fn each_file<T: Send>(paths: &[PathBuf], f: impl Fn(&Path) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(paths.len());
    if threads <= 1 {
        return paths.iter().map(|p| f(p)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(path) = paths.get(i) else { break mine };
                        mine.push((i, f(path)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

fn is_large(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= LAZY_BYTES)
}

/// The file's text, checked for syntax (the eager loader's `not JSON` error when it fails).
fn valid_text(path: &Path, shown: &str) -> Result<String, LoadError> {
    let text = crate::loader::read_file(Path::new(shown), path)?;
    json::check_syntax(&text).map_err(|e| file_error(shown, String::new(), format!("not JSON: {e}")))?;
    Ok(text)
}

fn index_validation_file(path: &Path, stem: &str, shown: &str, catalog: Option<&Catalog>) -> Result<Vec<Deferred>, Vec<LoadError>> {
    let text = valid_text(path, shown).map_err(|e| vec![e])?;
    let items = array_items(&text).ok_or_else(|| vec![file_error(shown, String::new(), "a corpus file is a list of groups".into())])?;
    let mut listed = Vec::new();
    let mut problems = Vec::new();
    for (i, span) in items.into_iter().enumerate() {
        let named = names_of(&text, span.clone(), catalog).and_then(|(description, rules)| {
            description.map(|d| (d, rules)).ok_or((String::new(), "missing description".into()))
        });
        match named {
            Ok((description, rules)) => listed.push(Deferred {
                id: corpus::group_id(stem, i, &description),
                file: shown.to_owned(),
                rules,
                path: path.to_owned(),
                stem: stem.to_owned(),
                index: i,
                span,
                expected: 0..0,
            }),
            Err((field, message)) => problems.push(file_error(shown, format!("[{i}]{field}"), message)),
        }
    }
    if problems.is_empty() { Ok(listed) } else { Err(problems) }
}

fn index_sdk_file(path: &Path, stem: &str, shown: &str, catalog: Option<&Catalog>) -> Result<Vec<Deferred>, corpus::Problem> {
    let text = valid_text(path, shown).map_err(|e| (e.field, e.message))?;
    let members = object_members(&text, 0..text.len())
        .ok_or((String::new(), "an SDK corpus file is an object with tools, typescript and python".into()))?;
    let (_, rules) = names_of(&text, 0..text.len(), catalog)?;
    let span_of = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, span)| span.clone());
    let tools = span_of("tools").ok_or((String::new(), "missing tools".into()))?;
    if text.as_bytes().get(tools.start) != Some(&b'[') {
        return Err((".tools".into(), "must be a list of tools".into()));
    }
    let mut listed = Vec::new();
    for (index, language) in LANGUAGES.into_iter().enumerate() {
        let expected = span_of(language).ok_or((String::new(), format!("missing {language}")))?;
        if text.as_bytes().get(expected.start) != Some(&b'"') {
            return Err((format!(".{language}"), "must be a string".into()));
        }
        listed.push(Deferred {
            id: format!("corpus/sdk/{stem}#{language}"),
            file: shown.to_owned(),
            rules: rules.clone(),
            path: path.to_owned(),
            stem: stem.to_owned(),
            index,
            span: tools.clone(),
            expected,
        });
    }
    if let Some((key, _)) = members.iter().find(|(k, _)| !["rules", "tools"].contains(&k.as_str()) && !LANGUAGES.contains(&k.as_str())) {
        return Err((format!(".{key}"), "unknown field".into()));
    }
    Ok(listed)
}

/// The `description` (when present) and the checked `rules` of the object at `span`.
fn names_of(text: &str, span: Range<usize>, catalog: Option<&Catalog>) -> Result<(Option<String>, Vec<String>), corpus::Problem> {
    let members = object_members(text, span).ok_or((String::new(), "must be an object".into()))?;
    let member = |key: &str| members.iter().find(|(k, _)| k == key).and_then(|(_, span)| text.get(span.clone()));
    let description = match member("description") {
        None => None,
        Some(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(Value::String(s)) => Some(s),
            _ => return Err((".description".into(), "must be a string".into())),
        },
    };
    let mut map = Map::new();
    if let Some(raw) = member("rules") {
        map.insert("rules".into(), json::parse_line(raw).map_err(|e| (".rules".into(), format!("not JSON: {e}")))?);
    }
    let rules = corpus::take_rules(&mut map, catalog)?;
    Ok((description, rules))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory of its own under the system's temporary directory, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!("dsh-corpus-index-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("a temporary directory");
            TempDir(dir)
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A temporary copy of some files of the validation corpus (`name`: the test's own directory).
    fn corpus_of(name: &str, files: &[&str]) -> TempDir {
        let dir = TempDir::new(name);
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/validation");
        for file in files {
            std::fs::copy(from.join(file), dir.path().join(file)).expect("copied");
        }
        dir
    }

    #[test]
    fn the_index_lists_what_the_eager_loader_loads_and_defers_the_large_file() {
        let dir = corpus_of("listed", &["arrays.json", "deep_value.json", "types.json"]);
        let eager = corpus::load_validation_corpus(dir.path(), "corpus/validation", None);
        let (listed, errors) = index_validation_corpus(dir.path(), "corpus/validation", None);
        assert!(eager.errors.is_empty() && errors.is_empty(), "{errors:?}");
        let names = |id: &str, file: &str, rules: &[String]| format!("{id} {file} {}", rules.join(","));
        let want: Vec<String> = eager.groups.iter().map(|g| names(&g.id, &g.file, &g.rules)).collect();
        let got: Vec<String> = listed.iter().map(|g| names(g.id(), g.file(), g.rules())).collect();
        assert_eq!(got, want);
        let deferred = listed.iter().filter(|g| matches!(g, ListedGroup::Deferred(_))).count();
        assert_eq!(deferred, eager.groups.iter().filter(|g| g.file.ends_with("deep_value.json")).count());
        for (listed, eager) in listed.into_iter().zip(&eager.groups) {
            let loaded = listed.load().expect("loads");
            assert_eq!((loaded.id.as_str(), loaded.tests.len()), (eager.id.as_str(), eager.tests.len()));
            assert_eq!(format!("{:?}", loaded.tests.first().map(|t| &t.data)), format!("{:?}", eager.tests.first().map(|t| &t.data)));
        }
    }

    #[test]
    fn a_large_file_that_is_not_json_is_one_file_error() {
        let dir = TempDir::new("broken");
        let text = format!("[{{\"description\": \"x\", \"schema\": {}}}", "[".repeat(LAZY_BYTES as usize));
        std::fs::write(dir.path().join("big.json"), text).expect("written");
        let (listed, errors) = index_validation_corpus(dir.path(), "corpus/validation", None);
        assert!(listed.is_empty());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].message.starts_with("not JSON"), "{}", errors[0].message);
    }

    #[test]
    fn an_item_whose_file_changed_after_listing_fails_naming_it() {
        let dir = corpus_of("changed", &["deep_value.json"]);
        let (listed, errors) = index_validation_corpus(dir.path(), "corpus/validation", None);
        assert!(errors.is_empty(), "{errors:?}");
        let mut listed = listed.into_iter();
        let (first, last) = (listed.next().expect("an item"), listed.last().expect("a second item"));
        // Only the item's own bytes are read when it runs: a shorter file fails the item past its end.
        let path = dir.path().join("deep_value.json");
        let text = std::fs::read_to_string(&path).expect("read");
        let cut = text.len() - 100;
        std::fs::write(&path, &text[..cut]).expect("truncated");
        let error = last.load().map(|g| g.id).expect_err("the last item is past the end now");
        assert!(error.contains("deep_value.json: [") && error.contains("changed since it was listed"), "{error}");
        // An item whose bytes now hold something else (here: not the same JSON) fails as well.
        std::fs::write(&path, format!(" {text}")).expect("shifted");
        assert!(first.load().is_err());
    }
}
