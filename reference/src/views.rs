//! The tool-owned UI render-intent vocabulary (upstream `presentation.ts`): the `card`-tagged views a
//! definition's `present_call` / `present_result` return ([`ToolCallView`], [`ToolResultView`]) and the
//! completed outcome a result presenter is handed ([`ToolResult`]). The views are plain data for a UI; the
//! registry never inspects them. Every view converts to and from upstream's JSON shape (serde), optional
//! fields left out when absent, so a view written as JSON (a log, a fixture) reads back losslessly.
//!
//! Spec: PRES-001, PRES-004, PRES-005.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Number, Value};

/// A call's category, for a UI's icon (upstream `ToolCallKind`; `other` is the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolCallKind {
    /// Reads a file or resource.
    Read,
    /// Edits one.
    Edit,
    /// Deletes one.
    Delete,
    /// Moves one.
    Move,
    /// Searches.
    Search,
    /// Runs something.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    Other,
}

/// A file a call reads or modifies, for editor follow-along (`line` is 1-based).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileLocation {
    /// The model-facing path.
    pub path: String,
    /// A line to focus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<Number>,
}

/// One file's change; `old_text` is `None` (JSON `null`) for a create or an overwrite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FileDiff {
    /// The file.
    pub path: String,
    /// Prior content (`null` when none is available).
    pub old_text: Option<String>,
    /// Content after the change.
    pub new_text: String,
}

/// How a PENDING call renders (upstream `ToolCallView`), tagged by `card`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "camelCase")]
pub enum ToolCallView {
    /// The default card: a titled row.
    Generic(GenericCallView),
    /// A shell command in a working directory.
    Terminal(TerminalCallView),
    /// A file change, as inline diffs derived from the arguments.
    Diff(DiffCallView),
}

/// `{ card: 'generic', title, kind?, rawInput?, content?, locations? }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GenericCallView {
    /// What this call does, always visible.
    pub title: String,
    /// Icon category (absent: `other`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolCallKind>,
    /// The salient input to show expanded (any JSON, `null` included: present means present).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub raw_input: Option<Value>,
    /// Content blocks shown on the pending call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Value>>,
    /// Files the call touches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<FileLocation>>,
}

/// `{ card: 'terminal', title, description?, cwd? }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TerminalCallView {
    /// The command.
    pub title: String,
    /// A one-line summary shown above the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The working directory (relative: against the session workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// `{ card: 'diff', title, diffs, locations? }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffCallView {
    /// Card header.
    pub title: String,
    /// One entry per changed file.
    pub diffs: Vec<FileDiff>,
    /// Files modified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<FileLocation>>,
}

/// How a COMPLETED call renders (upstream `ToolResultView`), tagged by `card`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "camelCase")]
pub enum ToolResultView {
    /// Replacement title and content.
    Generic(GenericResultView),
    /// A command's captured output and exit status.
    Terminal(TerminalResultView),
    /// The applied change.
    Diff(DiffResultView),
    /// A discovery search, tagged by `shape` (no call-time analogue).
    Search(SearchResultView),
    /// A line-numbered file read.
    Read(ReadResultView),
    /// A web retrieval, tagged by `kind`.
    Web(WebResultView),
}

/// `{ card: 'generic', title?, content? }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenericResultView {
    /// Replacement title (absent: the pending title stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// UI-facing content (absent: the raw result content).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Value>>,
}

/// `{ card: 'terminal', title?, output?, exitCode?, signal? }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TerminalResultView {
    /// Replacement title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Captured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Exit code, when the process exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<Number>,
    /// The signal that killed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
}

/// `{ card: 'diff', title?, diffs }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffResultView {
    /// Replacement title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The change, in file order.
    pub diffs: Vec<FileDiff>,
}

/// `card: 'search'`, tagged by `shape` (`matches`: grep, `paths`: glob).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "camelCase")]
pub enum SearchResultView {
    /// Matches grouped by file.
    Matches(SearchMatches),
    /// A flat path list.
    Paths(SearchPaths),
}

/// `{ shape: 'matches', title?, files, truncated, total }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchMatches {
    /// Replacement title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Matched lines by file, first-seen order.
    pub files: Vec<SearchFileMatches>,
    /// Whether the tool capped the retained matches.
    pub truncated: bool,
    /// Matches found before capping.
    pub total: Number,
}

/// One file's matches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchFileMatches {
    /// The display path.
    pub path: String,
    /// Its matched lines.
    pub matches: Vec<SearchLineMatch>,
}

/// One matched line (`lineNumber` is 1-based).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchLineMatch {
    /// Line number.
    pub line_number: Number,
    /// The line text.
    pub line: String,
}

/// `{ shape: 'paths', title?, paths, truncated, total }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchPaths {
    /// Replacement title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The retained paths.
    pub paths: Vec<String>,
    /// Whether the list was capped.
    pub truncated: bool,
    /// Paths found before capping.
    pub total: Number,
}

/// `{ card: 'read', title?, path, offset, lines, totalLines, lang?, content? }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadResultView {
    /// Replacement title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The file read.
    pub path: String,
    /// The 1-based first line requested (kept when `lines` is empty).
    pub offset: Number,
    /// The window, each line with its own file line number.
    pub lines: Vec<ReadFileLine>,
    /// The file's exact line count.
    pub total_lines: Number,
    /// Highlighting language hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// Fallback content for a UI without a read card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Value>>,
}

/// One numbered line of a read window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileLine {
    /// 1-based line number in the file.
    pub number: Number,
    /// The line without its newline.
    pub text: String,
}

/// `card: 'web'`, tagged by `kind` (its own discriminant, not a [`ToolCallKind`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum WebResultView {
    /// A `web_search`: the cited sources.
    Search(WebSearch),
    /// A `web_fetch`: the retrieval summary.
    Fetch(WebFetch),
}

/// `{ kind: 'search', title?, sources, answer?, truncated }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearch {
    /// Replacement title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The structured sources.
    pub sources: Vec<WebSource>,
    /// The provider's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Whether the source list was cut to the cap.
    pub truncated: bool,
}

/// One citeable source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebSource {
    /// The URL.
    pub url: String,
    /// Its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// An excerpt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// ISO-8601 timestamp as the provider gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
}

/// `{ kind: 'fetch', title?, url, statusCode, truncated }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebFetch {
    /// Replacement title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The final URL.
    pub url: String,
    /// HTTP status.
    pub status_code: Number,
    /// Whether the body was cut.
    pub truncated: bool,
}

/// The completed outcome handed to a result presenter (upstream `ToolResult`): the durable projection
/// of a `tools/result` — final content, failure state and the `presentationMeta` payload, if any (absent
/// when the tool has no projector or the call was nested).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolResult {
    /// The final model-facing content.
    pub content: Vec<Value>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The presentation metadata, verbatim (`null` included).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub meta: Option<Value>,
}

impl ToolCallView {
    /// Upstream's JSON shape.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl ToolResultView {
    /// Upstream's JSON shape.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A field written as `null` is present (`Some(Value::Null)`), not absent.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_tags_round_trip() {
        let views = [
            json!({"card": "search", "shape": "paths", "paths": ["a"], "truncated": false, "total": 1}),
            json!({"card": "web", "kind": "fetch", "url": "u", "statusCode": 200, "truncated": true}),
            json!({"card": "read", "path": "p", "offset": 1, "lines": [{"number": 1, "text": "x"}], "totalLines": 3}),
        ];
        for v in views {
            let view: ToolResultView = serde_json::from_value(v.clone()).expect("a valid view");
            assert_eq!(view.to_json(), v);
        }
    }

    #[test]
    fn a_null_raw_input_stays_present_and_unknown_cards_fail() {
        let view: ToolCallView = serde_json::from_value(json!({"card": "generic", "title": "t", "rawInput": null})).expect("valid");
        assert_eq!(view.to_json(), json!({"card": "generic", "title": "t", "rawInput": null}));
        assert!(serde_json::from_value::<ToolCallView>(json!({"card": "search", "title": "t"})).is_err());
        assert!(serde_json::from_value::<ToolCallView>(json!({"card": "generic", "title": "t", "extra": 1})).is_err());
    }
}
