//! The protocol transcript of the in-process subject, kept as values and rendered only when taken (a
//! response whose result is handed on by value is rendered when it arrives), or dropped unrendered
//! when cleared.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Value;

use super::deep;

/// Lines longer than this are cut, with a note of the full length.
pub const MAX_LINE: usize = 4096;
/// At most this many messages are kept between two takes; older ones are counted, then dropped.
pub const MAX_ENTRIES: usize = 10_000;

enum Entry {
    Sent(Arc<Value>),
    Received(Value),
    /// A received message already rendered (see [`Transcript::received_rendered`]).
    Line(String),
}

/// Messages exchanged since the last [`Transcript::take`].
#[derive(Default)]
pub struct Transcript {
    entries: VecDeque<Entry>,
    dropped: usize,
}

impl Transcript {
    /// Records a request the harness sent.
    pub fn sent(&mut self, request: Arc<Value>) {
        self.push(Entry::Sent(request));
    }

    /// Records a message the subject sent back (a notification or a response).
    pub fn received(&mut self, message: Value) {
        self.push(Entry::Received(message));
    }

    /// Records a request, rendered now: for a request whose params go back to the caller.
    pub fn sent_rendered(&mut self, message: &Value) {
        self.push(Entry::Line(format!("→ {}", render(message))));
    }

    /// Records a message the subject sent back, rendered now: for a response whose result is handed on
    /// by value, where keeping it for later would mean copying it whole (only [`MAX_LINE`] bytes of it
    /// are ever shown).
    pub fn received_rendered(&mut self, message: &Value) {
        self.push(Entry::Line(format!("← {}", render(message))));
    }

    /// Forgets everything since the last take without rendering it.
    pub fn clear(&mut self) {
        self.dropped = 0;
        for entry in self.entries.drain(..) {
            release(entry);
        }
    }

    fn push(&mut self, entry: Entry) {
        if self.entries.len() >= MAX_ENTRIES {
            if let Some(entry) = self.entries.pop_front() {
                release(entry);
            }
            self.dropped += 1;
        }
        self.entries.push_back(entry);
    }

    /// Renders and clears: `→ {...}` for requests, `← {...}` for what came back.
    pub fn take(&mut self) -> Vec<String> {
        let mut lines = Vec::with_capacity(self.entries.len() + 1);
        if self.dropped > 0 {
            lines.push(format!("… {} earlier messages not kept", self.dropped));
            self.dropped = 0;
        }
        for entry in self.entries.drain(..) {
            let line = match &entry {
                Entry::Sent(v) => format!("→ {}", render(v)),
                Entry::Received(v) => format!("← {}", render(v)),
                Entry::Line(_) => String::new(),
            };
            match entry {
                Entry::Line(rendered) => lines.push(rendered),
                entry => {
                    lines.push(line);
                    release(entry);
                }
            }
        }
        lines
    }
}

/// Drops an entry's value without recursing.
fn release(entry: Entry) {
    match entry {
        Entry::Received(v) => deep::dismantle(v),
        Entry::Sent(v) => {
            if let Ok(v) = Arc::try_unwrap(v) {
                deep::dismantle(v);
            }
        }
        Entry::Line(_) => {}
    }
}

impl Drop for Transcript {
    fn drop(&mut self) {
        self.clear();
    }
}

/// How far a truncated line's total length is counted.
const TOTAL_CAP: usize = 1 << 20;

/// One compact JSON line, cut at [`MAX_LINE`] bytes.
fn render(value: &Value) -> String {
    let mut out = Vec::new();
    let complete = deep::write_compact(&mut out, value, MAX_LINE).unwrap_or(false);
    if !complete || out.len() > MAX_LINE {
        out.truncate(MAX_LINE);
        let mut text = String::from_utf8_lossy(&out).into_owned();
        // The total is counted up to a cap: past it, a 100,000-level value or a 64 MiB log is only "over".
        match deep::compact_len_up_to(value, TOTAL_CAP) {
            Some(total) => text.push_str(&format!(" … (truncated, {total} bytes)")),
            None => text.push_str(&format!(" … (truncated, over {TOTAL_CAP} bytes)")),
        }
        return text;
    }
    String::from_utf8_lossy(&out).into_owned()
}
