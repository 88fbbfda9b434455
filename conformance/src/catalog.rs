//! The rule catalog (`spec/rules/<area>.yaml`, `spec/README.md` § Rule catalog): file types as written,
//! and the resolved [`Catalog`] of rules by id.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::scenario::{DEFAULT_PROFILE, Level};

/// One catalog file as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleFile {
    /// The id prefix of every rule in the file.
    pub area: String,
    /// The area's title.
    pub title: String,
    /// Default profile of the rules below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The rules.
    pub rules: Vec<RuleEntry>,
}

/// One rule as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleEntry {
    /// `AREA-NNN`: immutable, never reused.
    pub id: String,
    /// One testable normative statement.
    pub statement: String,
    /// Where it comes from.
    pub source: String,
    /// must / should / may.
    pub level: Level,
    /// Overrides the file's profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Exact strings, seed/upstream divergences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// `false`: no black-box scenario can see this rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observable: Option<bool>,
    /// Why not observable, and which unit test covers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A resolved rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// `AREA-NNN`.
    pub id: String,
    /// The file's `area`.
    pub area: String,
    /// The statement.
    pub statement: String,
    /// The source.
    pub source: String,
    /// The level.
    pub level: Level,
    /// The profile, defaulted (rule, then file, then `dsh-tools-0.1`).
    pub profile: String,
    /// Whether a black-box scenario can see it.
    pub observable: bool,
    /// Why not observable.
    pub reason: Option<String>,
    /// Notes.
    pub notes: Option<String>,
    /// The catalog file (display path, e.g. `spec/rules/reg.yaml`).
    pub file: PathBuf,
    /// The line of its `id`.
    pub line: usize,
}

impl Rule {
    /// Resolves one entry of `file`.
    pub fn resolve(file: &RuleFile, entry: RuleEntry, path: PathBuf, line: usize) -> Rule {
        let profile = entry.profile.or_else(|| file.profile.clone()).unwrap_or_else(|| DEFAULT_PROFILE.to_string());
        Rule {
            id: entry.id,
            area: file.area.clone(),
            statement: entry.statement,
            source: entry.source,
            level: entry.level,
            profile,
            observable: entry.observable.unwrap_or(true),
            reason: entry.reason,
            notes: entry.notes,
            file: path,
            line,
        }
    }
}

/// Every rule, by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    /// Rules by id.
    pub rules: BTreeMap<String, Rule>,
}

impl Catalog {
    /// The rule with this id.
    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.get(id)
    }

    /// Whether the id exists.
    pub fn contains(&self, id: &str) -> bool {
        self.rules.contains_key(id)
    }
}
