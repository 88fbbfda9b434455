//! The combined outer-output ledger of one run (upstream worker-thread `OutputLedger` and its JSON
//! byte accounting from `output-json`): logs, the completion value as JSON and a failure message share
//! `maxOutputBytes`, counted as the UTF-8 bytes of `JSON.stringify` of the logs array plus the value or
//! message. Crossing it is the terminal `output-limit` failure `outer output exceeded <n> bytes`, keeping
//! the longest fitting prefix of the logs.
//!
//! Shared by both backends: the Python host keeps its logs itself and calls [`OutputLedger`] directly; the
//! TypeScript engine wraps it (`typescript/ledger.rs`) with the logs and the one overflowing entry.
//!
//! Spec: RUN-029, RUN-030.

use serde_json::Value;

use crate::code::{CodeRunError, CodeRunErrorKind, CodeRunResult};
use crate::value::{js_f64, js_number_string};

/// Serialized bytes of one character inside a JSON string, as `JSON.stringify` escapes it.
fn char_bytes(c: char) -> u64 {
    match c {
        '"' | '\\' | '\u{8}' | '\t' | '\n' | '\u{c}' | '\r' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8() as u64,
    }
}

/// Exact serialized bytes of `text` as a JSON string (quotes included), or `None` once it exceeds
/// `max_bytes` (upstream `jsonStringBytesUpTo`).
pub fn json_string_bytes_up_to(text: &str, max_bytes: u64) -> Option<u64> {
    let mut bytes = 2u64;
    if bytes > max_bytes {
        return None;
    }
    // Byte-wise, a chunk at a time: every UTF-8 byte of a character JSON.stringify keeps costs 1, so only
    // `"`, `\` and control bytes add anything, and a chunk without them (the common case) costs its
    // length. The limit is checked per chunk: the answer is the same, as bytes only grow.
    for chunk in text.as_bytes().chunks(4096) {
        bytes += chunk.len() as u64;
        if plain_run(chunk) < chunk.len() {
            bytes += chunk.iter().map(|&b| escape_extra(b)).sum::<u64>();
        }
        if bytes > max_bytes {
            return None;
        }
    }
    Some(bytes)
}

/// How many bytes `bytes` starts with that a JSON string holds as they are (not `"`, `\` or a control
/// byte). Checked 32 bytes at a time without an early exit, so the compiler compares many bytes per
/// instruction (`Iterator::any` or a byte loop stops at each byte to ask: in the 64 MiB code-run trials the
/// ledger's share went from 15% of the samples to 1%, Python's frame reader's from 7.4% to 1.1%).
pub(crate) fn plain_run(bytes: &[u8]) -> usize {
    let special = |b: u8| (b == b'"') | (b == b'\\') | (b < 0x20);
    let mut clean = 0;
    for block in bytes.chunks_exact(32) {
        if block.iter().fold(false, |seen, &b| seen | special(b)) {
            break;
        }
        clean += 32;
    }
    let rest = &bytes[clean..];
    clean + rest.iter().position(|&b| special(b)).unwrap_or(rest.len())
}

/// What escaping adds to one byte of a JSON string beyond the byte itself (see [`char_bytes`]).
fn escape_extra(b: u8) -> u64 {
    match b {
        b'"' | b'\\' | 0x08 | b'\t' | b'\n' | 0x0c | b'\r' => 1,
        0..0x20 => 5,
        _ => 0,
    }
}

/// The longest prefix of `text` whose JSON string encoding fits `max_bytes` (upstream
/// `truncateJsonStringBytes`); empty when not even the quotes fit.
pub fn truncate_json_string_bytes(text: &str, max_bytes: u64) -> &str {
    if max_bytes < 2 {
        return "";
    }
    let mut bytes = 2u64;
    for (index, c) in text.char_indices() {
        let cost = char_bytes(c);
        if bytes + cost > max_bytes {
            return &text[..index];
        }
        bytes += cost;
    }
    text
}

/// Exact bytes of `JSON.stringify(value)` (numbers as JavaScript prints them), or `None` once it exceeds
/// `max_bytes` (upstream `jsonValueBytesUpTo`). Iterative.
pub fn json_value_bytes_up_to(value: &Value, max_bytes: u64) -> Option<u64> {
    let mut bytes = 0u64;
    let mut stack: Vec<(&Value, bool)> = vec![(value, false)];
    while let Some((current, separated)) = stack.pop() {
        if separated {
            bytes += 1;
        }
        match current {
            Value::Null => bytes += 4,
            Value::Bool(b) => bytes += if *b { 4 } else { 5 },
            Value::Number(n) => bytes += js_number_string(js_f64(n)).len() as u64,
            Value::String(s) => bytes += json_string_bytes_up_to(s, max_bytes.checked_sub(bytes)?)?,
            Value::Array(items) => {
                bytes += 2;
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((item, i > 0));
                }
            }
            Value::Object(map) => {
                bytes += 2;
                for (i, (key, item)) in map.iter().enumerate() {
                    if i > 0 {
                        bytes += 1;
                    }
                    bytes += json_string_bytes_up_to(key, max_bytes.checked_sub(bytes)?)? + 1;
                    if bytes > max_bytes {
                        return None;
                    }
                    stack.push((item, false));
                }
            }
        }
        if bytes > max_bytes {
            return None;
        }
    }
    Some(bytes)
}

/// One run's combined ledger. Binding values never enter it.
#[derive(Clone, Debug)]
pub struct OutputLedger {
    max_bytes: u64,
    bytes: u64,
    entries: u64,
}

impl OutputLedger {
    /// An empty ledger (`[]` already counted).
    pub fn new(max_bytes: u64) -> Self {
        Self { max_bytes, bytes: 2, entries: 0 }
    }

    /// Admit one log entry into `sink` (moved, not copied: a log may be 64 MiB), or hand it back when it
    /// crosses the cap.
    pub fn admit(&mut self, text: String, sink: &mut Vec<String>) -> Result<(), String> {
        self.admit_sized(text, sink).map(|_| ())
    }

    /// [`admit`](Self::admit), answering the entry's serialized bytes (quotes included), which
    /// [`limit_sized`](Self::limit_sized) takes back so it need not measure the logs again.
    pub fn admit_sized(&mut self, text: String, sink: &mut Vec<String>) -> Result<u64, String> {
        let separator = u64::from(self.entries > 0);
        let available = self.max_bytes.saturating_sub(self.bytes + separator);
        let Some(string_bytes) = json_string_bytes_up_to(&text, available) else { return Err(text) };
        self.bytes += string_bytes + separator;
        self.entries += 1;
        sink.push(text);
        Ok(string_bytes)
    }

    /// Bytes left for the completion value or a failure message.
    pub fn remaining(&self) -> u64 {
        self.max_bytes.saturating_sub(self.bytes)
    }

    /// `outer output exceeded <n> bytes`.
    pub fn limit_message(&self) -> String {
        format!("outer output exceeded {} bytes", self.max_bytes)
    }

    /// A completion as the worker and then the host see it (upstream `prepareCompletion`, then
    /// `OutputLedger.success` / `failure`): a value that does not fit what the logs left becomes the fixed
    /// `output-limit` diagnostic, which keeps every admitted log when it fits itself.
    pub fn completion(&self, logs: Vec<String>, value: Option<Value>) -> CodeRunResult {
        if let Some(v) = value {
            if json_value_bytes_up_to(&v, self.remaining()).is_none() {
                crate::value::dismantle(v);
                return self.failure(logs, CodeRunErrorKind::OutputLimit, self.limit_message());
            }
            return CodeRunResult { logs, value: Some(v), error: None };
        }
        CodeRunResult { logs, value: None, error: None }
    }

    /// A successful completion (absent or JSON value) against the remaining budget.
    pub fn success(&self, logs: Vec<String>, value: Option<Value>) -> CodeRunResult {
        if let Some(v) = &value {
            if json_value_bytes_up_to(v, self.max_bytes.saturating_sub(self.bytes)).is_none() {
                if let Some(v) = value {
                    crate::value::dismantle(v);
                }
                return self.limit(logs);
            }
        }
        CodeRunResult { logs, value, error: None }
    }

    /// A failure, unless its message does not fit: then the output-limit failure.
    pub fn failure(&self, logs: Vec<String>, kind: CodeRunErrorKind, message: String) -> CodeRunResult {
        if json_string_bytes_up_to(&message, self.max_bytes.saturating_sub(self.bytes)).is_none() {
            return self.limit(logs);
        }
        CodeRunResult { logs, value: None, error: Some(CodeRunError { kind, message }) }
    }

    /// The explicit output-limit failure, keeping the longest fitting prefix of the logs.
    pub fn limit(&self, logs: Vec<String>) -> CodeRunResult {
        self.limit_sized(logs, &[])
    }

    /// [`limit`](Self::limit) when the serialized bytes of the first `sizes.len()` logs are known (as
    /// [`admit_sized`](Self::admit_sized) answered them): those are not measured again, so ending a run
    /// whose ledger holds millions of entries, or 64 MiB, costs a pass over the sizes, not over the text.
    pub fn limit_sized(&self, logs: Vec<String>, sizes: &[u64]) -> CodeRunResult {
        let full = self.limit_message();
        let message_bytes = full.len() as u64 + 2;
        let log_budget = self.max_bytes.saturating_sub(message_bytes);
        let mut retained: Vec<String> = Vec::new();
        let mut retained_bytes = 2u64;
        for (index, text) in logs.into_iter().enumerate() {
            let separator = u64::from(!retained.is_empty());
            let available = log_budget.saturating_sub(retained_bytes + separator);
            let known = sizes.get(index).map(|&bytes| Some(bytes).filter(|&b| b <= available));
            if let Some(string_bytes) = known.unwrap_or_else(|| json_string_bytes_up_to(&text, available)) {
                retained.push(text);
                retained_bytes += string_bytes + separator;
                continue;
            }
            let prefix = truncate_json_string_bytes(&text, available);
            if !prefix.is_empty() {
                let prefix_bytes = json_string_bytes_up_to(prefix, available).unwrap_or(available);
                retained.push(prefix.to_owned());
                retained_bytes += prefix_bytes + separator;
            }
            break;
        }
        let message = truncate_json_string_bytes(&full, self.max_bytes.saturating_sub(retained_bytes)).to_owned();
        CodeRunResult { logs: retained, value: None, error: Some(CodeRunError { kind: CodeRunErrorKind::OutputLimit, message }) }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_runs_stop_at_the_first_special_byte_wherever_it_is() {
        assert_eq!(plain_run(b""), 0);
        assert_eq!(plain_run(&[b'x'; 100]), 100);
        for at in [0, 1, 31, 32, 33, 63, 64, 95, 99] {
            for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                let mut bytes = vec![b'x'; 100];
                bytes[at] = special;
                bytes[99] = b'"';
                assert_eq!(plain_run(&bytes), at, "{special:#x} at {at}");
            }
        }
        assert_eq!(plain_run("é😀 ok\"".as_bytes()), "é😀 ok".len());
    }

    #[test]
    fn strings_are_metered_like_json_stringify() {
        assert_eq!(json_string_bytes_up_to("", 10), Some(2));
        assert_eq!(json_string_bytes_up_to("a\"\n\u{1}é😀", 100), Some(2 + 1 + 2 + 2 + 6 + 2 + 4));
        assert_eq!(json_string_bytes_up_to("abc", 4), None);
        assert_eq!(truncate_json_string_bytes("abcé", 5), "abc");
        assert_eq!(truncate_json_string_bytes("abcé", 6), "abc");
        assert_eq!(truncate_json_string_bytes("abcé", 7), "abcé");
        assert_eq!(json_value_bytes_up_to(&serde_json::json!({"a":[1,2.5,null,true],"b":"x"}), 100), Some(31));
        assert_eq!(json_value_bytes_up_to(&serde_json::json!(1e21), 100), Some(5));
    }

    #[test]
    fn the_chunked_count_agrees_with_the_per_character_one() {
        let per_char = |text: &str| 2 + text.chars().map(char_bytes).sum::<u64>();
        let mut texts = vec!["x".repeat(4096), "x".repeat(4097), "é".repeat(3000), "😀\n".repeat(2000)];
        for at in [0, 1, 4094, 4095, 4096, 4097, 8191] {
            let mut text = "y".repeat(9000);
            text.replace_range(at..at + 1, "\u{1}");
            texts.push(text.clone());
            text.replace_range(at + 2..at + 3, "\"");
            texts.push(text);
        }
        for text in &texts {
            let exact = per_char(text);
            assert_eq!(json_string_bytes_up_to(text, exact), Some(exact), "{} bytes", text.len());
            assert_eq!(json_string_bytes_up_to(text, exact - 1), None, "{} bytes", text.len());
            assert_eq!(json_string_bytes_up_to(text, u64::MAX), Some(exact));
        }
    }

    #[test]
    fn values_are_metered_like_their_json_text() {
        let value = serde_json::json!({"a": [1, "x", null, true, false, 1.5, {"k\n": {}}], "": []});
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(json_value_bytes_up_to(&value, 1000), Some(text.len() as u64));
        assert_eq!(json_value_bytes_up_to(&value, text.len() as u64 - 1), None);
        assert_eq!(json_value_bytes_up_to(&serde_json::json!(1152921504606846976_u64), 100), Some(19));
        assert_eq!(truncate_json_string_bytes("abcdef", 5), "abc");
        assert_eq!(truncate_json_string_bytes("é😀", 7), "é");
    }

    #[test]
    fn the_ledger_limits_like_upstream() {
        let mut ledger = OutputLedger::new(40);
        let mut logs = Vec::new();
        assert_eq!(ledger.admit("hello".to_owned(), &mut logs), Ok(()));
        assert_eq!(ledger.admit("x".repeat(40), &mut logs), Err("x".repeat(40)));
        let mut all = logs.clone();
        all.push("x".repeat(40));
        let result = ledger.limit(all);
        let error = result.error.unwrap();
        assert_eq!(error.kind, CodeRunErrorKind::OutputLimit);
        // 40 - ("outer output exceeded 40 bytes" + quotes = 32) leaves 8 bytes of logs: ["hello"] is 9.
        assert_eq!(result.logs, vec!["hell".to_owned()]);
        assert_eq!(error.message, "outer output exceeded 40 bytes");
        assert!(ledger.success(vec!["hello".into()], Some(serde_json::json!("a".repeat(40)))).error.is_some());
        assert!(ledger.success(vec!["hello".into()], Some(serde_json::json!(12))).error.is_none());
    }

    #[test]
    fn a_sized_limit_agrees_with_a_measured_one() {
        for max in [40, 45, 60, 100, 1000] {
            let mut ledger = OutputLedger::new(max);
            let (mut logs, mut sizes) = (Vec::new(), Vec::new());
            for text in ["hello", "a\"b", "", "é😀", "x\ny", "tail"] {
                match ledger.admit_sized(text.to_owned(), &mut logs) {
                    Ok(bytes) => sizes.push(bytes),
                    Err(text) => {
                        logs.push(text);
                        break;
                    }
                }
            }
            assert_eq!(ledger.limit_sized(logs.clone(), &sizes), ledger.limit(logs), "max {max}");
        }
    }
}
