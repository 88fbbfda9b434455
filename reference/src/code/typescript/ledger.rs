//! The combined outer-output ledger of one run (upstream's `OutputLedger` and the worker's `LogBuffer`):
//! logs and the completion value or failure message share `maxOutputBytes`, counted as the bytes of the
//! JSON text `["log", ...]` plus the value's JSON. A log that does not fit ends the run as `output-limit`
//! with the fitting prefix of the logs retained; the completion and failure diagnostics are checked against
//! what is left.
//!
//! Spec: RUN-029 (the output ledger: `outer output exceeded <n> bytes`, log prefix retention, output-limit
//! precedence), RUN-030 (binding values are not counted).

use serde_json::Value;

use crate::code::{CodeRunError, CodeRunErrorKind, CodeRunResult};
use crate::value::push_js_number;

/// JSON-string bytes one character adds inside the quotes (upstream `serializedCharacterBytes`).
fn char_bytes(c: char) -> i64 {
    match c {
        '"' | '\\' => 2,
        '\u{8}' | '\t' | '\n' | '\u{c}' | '\r' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8() as i64,
    }
}

/// The bytes of `text` as a JSON string (quotes included), or `None` once it would pass `max` (upstream
/// `jsonStringBytesUpTo`).
pub(crate) fn json_string_bytes_up_to(text: &str, max: i64) -> Option<i64> {
    if max < 2 {
        return None;
    }
    let mut bytes = 2;
    for c in text.chars() {
        bytes += char_bytes(c);
        if bytes > max {
            return None;
        }
    }
    Some(bytes)
}

/// The longest character-aligned prefix whose JSON string fits `max` bytes (upstream
/// `truncateJsonStringBytes`).
pub(crate) fn truncate_json_string(text: &str, max: i64) -> &str {
    if max < 2 {
        return "";
    }
    let mut bytes = 2;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        let cost = char_bytes(c);
        if bytes + cost > max {
            return &text[..i];
        }
        bytes += cost;
        end = i + c.len_utf8();
    }
    &text[..end]
}

/// The bytes of a lossless JSON value's text, or `None` once it would pass `max` (upstream
/// `jsonValueBytesUpTo`), walked with an explicit stack.
pub(crate) fn json_value_bytes_up_to(value: &Value, max: i64) -> Option<i64> {
    let mut bytes: i64 = 0;
    let mut number = String::new();
    let mut stack = vec![value];
    // Separators and key costs are charged when a container is opened: same total as upstream's order.
    while let Some(current) = stack.pop() {
        let cost = match current {
            Value::Null => 4,
            Value::Bool(b) => {
                if *b {
                    4
                } else {
                    5
                }
            }
            Value::Number(n) => {
                number.clear();
                push_js_number(&mut number, n.as_f64().unwrap_or(f64::NAN));
                number.len() as i64
            }
            Value::String(s) => json_string_bytes_up_to(s, max - bytes)?,
            Value::Array(items) => {
                stack.extend(items.iter().rev());
                2 + items.len().saturating_sub(1) as i64
            }
            Value::Object(map) => {
                let mut cost = 2 + map.len().saturating_sub(1) as i64;
                for key in map.keys() {
                    cost += json_string_bytes_up_to(key, max - bytes - cost)? + 1;
                }
                stack.extend(map.values().rev());
                cost
            }
        };
        bytes += cost;
        if bytes > max {
            return None;
        }
    }
    Some(bytes)
}

/// One run's ledger: the admitted logs and their JSON-array bytes.
#[derive(Debug)]
pub(crate) struct Ledger {
    max_bytes: i64,
    bytes: i64,
    logs: Vec<String>,
    /// The log that did not fit, once one did not: the run is over (`output-limit`).
    overflow: Option<String>,
}

impl Ledger {
    pub(crate) fn new(max_bytes: u64) -> Self {
        Self { max_bytes: i64::try_from(max_bytes).unwrap_or(i64::MAX), bytes: 2, logs: Vec::new(), overflow: None }
    }

    /// Admit one log entry; `false` (and the run is over) when it does not fit. Logs after an overflow are
    /// dropped.
    pub(crate) fn admit(&mut self, text: String) -> bool {
        if self.overflow.is_some() {
            return false;
        }
        let separator = i64::from(!self.logs.is_empty());
        match json_string_bytes_up_to(&text, self.max_bytes - self.bytes - separator) {
            Some(bytes) => {
                self.bytes += bytes + separator;
                self.logs.push(text);
                true
            }
            None => {
                self.overflow = Some(text);
                false
            }
        }
    }

    /// Bytes left for the completion value or a failure message.
    fn remaining(&self) -> i64 {
        self.max_bytes - self.bytes
    }

    fn limit_message(&self) -> String {
        format!("outer output exceeded {} bytes", self.max_bytes)
    }

    /// The run's result once the program completed with `value` (`None` = `undefined`): the worker's
    /// completion check, then the host's.
    pub(crate) fn success(self, value: Option<Value>) -> CodeRunResult {
        if self.overflow.is_some() {
            return self.limit();
        }
        match value {
            None => CodeRunResult { logs: self.logs, value: None, error: None },
            Some(value) => {
                if json_value_bytes_up_to(&value, self.remaining()).is_none() {
                    crate::value::dismantle(value);
                    // The worker reports the fixed overflow diagnostic, which the host then admits or limits.
                    let message = self.limit_message();
                    return self.failure(CodeRunErrorKind::OutputLimit, message);
                }
                CodeRunResult { logs: self.logs, value: Some(value), error: None }
            }
        }
    }

    /// A failure diagnostic the worker produced (exception, invalid output): replaced by the fixed overflow
    /// diagnostic when it does not fit, then finalized by the host.
    pub(crate) fn worker_failure(self, kind: CodeRunErrorKind, message: String) -> CodeRunResult {
        if json_string_bytes_up_to(&message, self.remaining()).is_none() {
            let message = self.limit_message();
            return self.failure(CodeRunErrorKind::OutputLimit, message);
        }
        self.failure(kind, message)
    }

    /// A failure (host-side: timeout, abort, worker exit, ...), with `output-limit` taking precedence when the
    /// message does not fit (upstream `OutputLedger.failure`).
    pub(crate) fn failure(self, kind: CodeRunErrorKind, message: String) -> CodeRunResult {
        if self.overflow.is_some() || json_string_bytes_up_to(&message, self.remaining()).is_none() {
            return self.limit();
        }
        CodeRunResult { logs: self.logs, value: None, error: Some(CodeRunError { kind, message }) }
    }

    /// The explicit `output-limit` failure, keeping the logs (and a prefix of the first one that does not
    /// fit) that leave room for the message (upstream `OutputLedger.limit`).
    pub(crate) fn limit(mut self) -> CodeRunResult {
        let full = self.limit_message();
        let message_bytes = full.len() as i64 + 2;
        let log_budget = self.max_bytes - message_bytes;
        let mut logs = std::mem::take(&mut self.logs);
        logs.extend(self.overflow.take());
        let mut retained_bytes: i64 = 2;
        let mut kept = 0;
        let mut prefix = None;
        for text in &logs {
            let separator = i64::from(kept > 0);
            let available = log_budget - retained_bytes - separator;
            if let Some(bytes) = json_string_bytes_up_to(text, available) {
                retained_bytes += bytes + separator;
                kept += 1;
                continue;
            }
            let head = truncate_json_string(text, available);
            if !head.is_empty() {
                retained_bytes += json_string_bytes_up_to(head, available).unwrap_or(0) + separator;
                prefix = Some(head.to_owned());
            }
            break;
        }
        logs.truncate(kept);
        logs.extend(prefix);
        let message = truncate_json_string(&full, self.max_bytes - retained_bytes).to_owned();
        CodeRunResult { logs, value: None, error: Some(CodeRunError { kind: CodeRunErrorKind::OutputLimit, message }) }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_bytes() {
        assert_eq!(json_string_bytes_up_to("", 10), Some(2));
        assert_eq!(json_string_bytes_up_to("a\"\n\u{1}é😀", 100), Some(2 + 1 + 2 + 2 + 6 + 2 + 4));
        assert_eq!(json_string_bytes_up_to("abc", 4), None);
        assert_eq!(truncate_json_string("abcdef", 5), "abc");
        assert_eq!(truncate_json_string("é😀", 7), "é");
    }

    #[test]
    fn value_bytes_match_json_text() {
        let value = json!({"a": [1, "x", null, true, false, 1.5, {"k\n": {}}], "": []});
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(json_value_bytes_up_to(&value, 1000), Some(text.len() as i64));
        assert_eq!(json_value_bytes_up_to(&value, text.len() as i64 - 1), None);
        assert_eq!(json_value_bytes_up_to(&json!(1152921504606846976_u64), 100), Some(19));
    }

    /// Upstream: `while(true) console.log("xxxxxxxxxx")` under maxOutputBytes 100 keeps five logs.
    #[test]
    fn limit_keeps_upstream_prefix() {
        let mut ledger = Ledger::new(100);
        while ledger.admit("xxxxxxxxxx".to_owned()) {}
        let result = ledger.limit();
        assert_eq!(result.logs.len(), 5);
        assert_eq!(result.error.unwrap().message, "outer output exceeded 100 bytes");
    }
}
