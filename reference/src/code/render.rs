//! The `run_code` output rendering (upstream `renderJsonValue` / `renderValue` and the transport's
//! `output.render`): the captured logs joined by newlines, then the completion value — a string as is,
//! any other JSON pretty-printed with two-space indentation whose total indentation is capped at ten
//! characters (deeper subtrees print compact), numbers in ECMAScript `Number::toString` form — the two
//! parts joined by a newline when both are non-empty, else `(run_code completed with no output)`.
//!
//! The printer walks the value with an explicit work stack: output stays linear in the value's size and
//! values of any depth render without recursion.
//!
//! The model's text cap (`CodeRuntimeLimits::max_model_text_bytes`, unset by default): a text longer than
//! the cap keeps its first `cap` bytes (cut back to a character boundary) and ends with [`cut_marker`]'s
//! `…[dsh: <total> bytes, <cut> cut]`, so the model sees that output is missing and how much. [`CappedText`]
//! builds such a text from its parts without ever holding more than the cap (a failed run's captured
//! output may be 64 MiB). It applies to the rendered `{ logs, result? }` and to a failed run's
//! `code run failed (...)` text (`bridge.rs`), for every backend.
//!
//! Spec: RUN-024, RUN-025.

use serde_json::Value;

use crate::value::{js_f64, push_js_number};
use super::flavor::json_string;

/// The text of an empty run (no logs, no value, or both empty).
pub const NO_OUTPUT: &str = "(run_code completed with no output)";

/// One indentation step.
const INDENT: &str = "  ";

/// `JSON.stringify`'s cap on the `space` string, applied here to the total indentation.
const MAX_INDENT_CHARS: usize = 10;

enum Task<'a> {
    Text(String),
    Value { value: &'a Value, depth: usize, compact: bool },
}

/// Upstream `renderJsonValue`: pretty-print one JSON value (strings quoted) with the indentation cap.
pub fn render_json_value(value: &Value) -> String {
    let mut out = String::new();
    let mut tasks = vec![Task::Value { value, depth: 0, compact: false }];
    while let Some(task) = tasks.pop() {
        let (current, depth, compact) = match task {
            Task::Text(text) => {
                out.push_str(&text);
                continue;
            }
            Task::Value { value, depth, compact } => (value, depth, compact),
        };
        match current {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => push_js_number(&mut out, js_f64(n)),
            Value::String(s) => out.push_str(&json_string(s)),
            Value::Array(items) => {
                let compact = compact || (depth + 1) * INDENT.len() > MAX_INDENT_CHARS;
                let child = depth + 1;
                out.push('[');
                if items.is_empty() {
                    out.push(']');
                    continue;
                }
                tasks.push(Task::Text(if compact { "]".to_owned() } else { format!("\n{}]", INDENT.repeat(depth)) }));
                for (index, item) in items.iter().enumerate().rev() {
                    tasks.push(Task::Value { value: item, depth: child, compact });
                    let separator = if compact {
                        if index == 0 { String::new() } else { ",".to_owned() }
                    } else {
                        format!("{}{}", if index == 0 { "\n" } else { ",\n" }, INDENT.repeat(child))
                    };
                    tasks.push(Task::Text(separator));
                }
            }
            Value::Object(map) => {
                let compact = compact || (depth + 1) * INDENT.len() > MAX_INDENT_CHARS;
                let child = depth + 1;
                out.push('{');
                if map.is_empty() {
                    out.push('}');
                    continue;
                }
                tasks.push(Task::Text(if compact { "}".to_owned() } else { format!("\n{}}}", INDENT.repeat(depth)) }));
                let entries: Vec<(&String, &Value)> = map.iter().collect();
                for (index, (key, item)) in entries.into_iter().enumerate().rev() {
                    tasks.push(Task::Value { value: item, depth: child, compact });
                    let key = json_string(key);
                    let separator = if compact {
                        format!("{}{key}:", if index == 0 { "" } else { "," })
                    } else {
                        format!("{}{}{key}: ", if index == 0 { "\n" } else { ",\n" }, INDENT.repeat(child))
                    };
                    tasks.push(Task::Text(separator));
                }
            }
        }
    }
    out
}

/// Upstream `renderValue`: a string completion value as is, anything else through
/// [`render_json_value`].
pub fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => render_json_value(other),
    }
}

/// The transport's model-facing text for `{ logs, result? }`.
pub fn render_output(logs: &[String], result: Option<&Value>) -> String {
    render_parts(logs.iter().map(String::as_str), result, None)
}

/// [`render_output`] under the model's text cap (`None`: no cap).
pub fn render_output_capped(logs: &[String], result: Option<&Value>, max_model_text_bytes: Option<u64>) -> String {
    render_parts(logs.iter().map(String::as_str), result, max_model_text_bytes)
}

/// The marker that ends a text cut to the model's cap: `…[dsh: <total> bytes, <cut> cut]`, `total` the
/// text's full length and `cut` the bytes left out, both in UTF-8 bytes.
pub fn cut_marker(total: usize, cut: usize) -> String {
    format!("…[dsh: {total} bytes, {cut} cut]")
}

/// A text built from parts under an optional byte cap: past the cap, parts are only counted, and
/// [`finish`](Self::finish) appends [`cut_marker`].
#[derive(Debug)]
pub struct CappedText {
    out: String,
    cap: usize,
    total: usize,
}

impl CappedText {
    /// An empty text capped at `cap` bytes (`None`: no cap).
    pub fn new(cap: Option<u64>) -> Self {
        Self { out: String::new(), cap: cap.map_or(usize::MAX, |c| usize::try_from(c).unwrap_or(usize::MAX)), total: 0 }
    }

    /// Append `part`, or as much of it as the cap leaves room for (cut back to a character boundary).
    pub fn push(&mut self, part: &str) {
        self.total = self.total.saturating_add(part.len());
        if self.out.len() == self.total - part.len() {
            let room = self.cap.saturating_sub(self.out.len());
            if part.len() <= room {
                self.out.push_str(part);
            } else {
                let mut end = room;
                while !part.is_char_boundary(end) {
                    end -= 1;
                }
                self.out.push_str(&part[..end]);
            }
        }
    }

    /// Whether nothing was pushed (or only empty parts).
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The text, with [`cut_marker`] when parts were cut.
    pub fn finish(mut self) -> String {
        if self.total > self.out.len() {
            let marker = cut_marker(self.total, self.total - self.out.len());
            self.out.push_str(&marker);
        }
        self.out
    }
}

/// The logs joined by newlines, then the rendered result after one more when both are non-empty, built in
/// one buffer (a log may be 64 MiB: no intermediate joins), under the model's text cap.
fn render_parts<'a>(logs: impl Iterator<Item = &'a str> + Clone, result: Option<&Value>, cap: Option<u64>) -> String {
    let rendered = result.map(render_value).unwrap_or_default();
    let mut out = if cap.is_none() {
        let (count, bytes) = logs.clone().fold((0usize, 0usize), |(n, b), l| (n + 1, b + l.len()));
        let mut text = CappedText::new(None);
        text.out.reserve(bytes + count + rendered.len());
        text
    } else {
        CappedText::new(cap)
    };
    for (i, log) in logs.enumerate() {
        if i > 0 {
            out.push("\n");
        }
        out.push(log);
    }
    if !rendered.is_empty() {
        if !out.is_empty() {
            out.push("\n");
        }
        out.push(&rendered);
    }
    if out.is_empty() { NO_OUTPUT.to_owned() } else { out.finish() }
}

/// The transport's `output.render(args, value)`: one text block with [`render_output`]'s text of the
/// output value `{ logs, result? }`, under the model's text cap.
pub(crate) fn render_block(value: &Value, cap: Option<u64>) -> Vec<Value> {
    let logs = value.get("logs").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let text = render_parts(logs.iter().map(|l| l.as_str().unwrap_or_default()), value.get("result"), cap);
    crate::result::text_content(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shallow_values_pretty_print_and_deep_ones_compact() {
        assert_eq!(render_json_value(&json!({"a": [1, {"b": null}], "c": {}})), "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {}\n}");
        let deep = json!([[[[[[1, 2]]]]]]);
        assert_eq!(render_json_value(&deep), "[\n  [\n    [\n      [\n        [\n          [1,2]\n        ]\n      ]\n    ]\n  ]\n]");
        assert_eq!(render_output(&[], None), NO_OUTPUT);
        assert_eq!(render_output(&["a".into(), "".into()], Some(&json!(""))), "a\n");
        assert_eq!(render_output(&[], Some(&json!(1e21))), "1e+21");
        assert_eq!(render_output(&["".into()], None), NO_OUTPUT);
        assert_eq!(render_output(&["".into(), "".into()], None), "\n");
        assert_eq!(render_output(&["a".into(), "b".into()], Some(&json!(2))), "a\nb\n2");
        assert_eq!(render_output(&["".into()], Some(&json!(2))), "2");
    }

    #[test]
    fn the_model_text_cap_cuts_on_a_character_boundary_and_says_how_much() {
        let logs = vec!["a".repeat(10), "é".repeat(10)];
        // Uncapped, or capped above the length: unchanged.
        assert_eq!(render_output_capped(&logs, Some(&json!(1)), None), render_output(&logs, Some(&json!(1))));
        assert_eq!(render_output_capped(&logs, None, Some(100)), render_output(&logs, None));
        // 10 + 1 + 20 = 31 bytes; a cap of 14 keeps "aaaaaaaaaa\né" (13 bytes: 14 would split an é).
        assert_eq!(render_output_capped(&logs, None, Some(14)), format!("aaaaaaaaaa\né{}", cut_marker(31, 18)));
        assert_eq!(cut_marker(31, 18), "…[dsh: 31 bytes, 18 cut]");
        assert_eq!(render_output_capped(&logs, Some(&json!("tail")), Some(0)), cut_marker(36, 36));
        assert_eq!(render_output_capped(&[], None, Some(0)), NO_OUTPUT);
        // A part after the cut is counted, never written.
        let mut text = CappedText::new(Some(3));
        for part in ["ab", "cd", "ef"] {
            text.push(part);
        }
        assert_eq!(text.finish(), format!("abc{}", cut_marker(6, 3)));
    }

    #[test]
    fn very_deep_values_render_without_recursion() {
        let mut v = json!(0);
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        let text = render_json_value(&v);
        crate::value::dismantle(v);
        assert!(text.contains("[[[0]]]") && text.ends_with("]\n]"));
    }
}
