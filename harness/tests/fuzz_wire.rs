//! Property tests over what an adapter or a user can feed the harness (#12): the stdout line reader
//! (arbitrary bytes, arbitrary read splits, a small cap), the stderr tail, the wire checks of a line
//! (`parse`, `validate_incoming`, `response_id`, `classify`) and the expectations parser. No input may
//! panic; lines come out exactly as the bytes say; memory stays within the caps.
//!
//! Case counts: proptest's default (256 a test) in CI; `PROPTEST_CASES=N` for a long run.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::collections::HashSet;
use std::io::Read;

use dsh_harness::adapter::lines::{Line, LineReader, STDERR_LINE_MAX, STDERR_TAIL_LINES, StderrTail};
use dsh_harness::adapter::wire;
use dsh_harness::run::expectations::Expectations;
use proptest::prelude::*;

/// A reader returning `bytes` in pieces of the given sizes (then the rest in one piece).
struct Chunks {
    bytes: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = if self.sizes.is_empty() { usize::MAX } else { self.sizes.remove(0).max(1) };
        let n = size.min(buf.len()).min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The model: lines split on `\n`, the last one without a `\n` kept when not empty; longer than `max`
/// is `TooLong`.
fn model(bytes: &[u8], max: usize) -> Vec<Result<Vec<u8>, usize>> {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.into_iter().map(|l| if l.len() > max { Err(l.len()) } else { Ok(l.to_vec()) }).collect()
}

fn bytes_strategy() -> impl Strategy<Value = Vec<u8>> {
    const BYTES: &[u8] = b"xxxxxx\n\n\n\r{\xff\x00\xe9";
    prop::collection::vec(prop::sample::select(BYTES), 0..400)
}

proptest! {
    #[test]
    fn line_reader_splits_exactly(bytes in bytes_strategy(), sizes in prop::collection::vec(1usize..70, 0..40), max in 1usize..40) {
        let mut reader = LineReader::new(Chunks { bytes: bytes.clone(), at: 0, sizes }, max);
        let mut got = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            got.push(line);
        }
        let expected = model(&bytes, max);
        prop_assert_eq!(got.len(), expected.len(), "{:?}", got);
        for (line, want) in got.iter().zip(&expected) {
            match (line, want) {
                (Line::Full(l), Ok(w)) => prop_assert_eq!(l, w),
                (Line::TooLong { head, len }, Err(total)) => {
                    prop_assert!(*len > max && len <= total, "len {len}, max {max}, total {total}");
                    prop_assert!(head.len() <= 600);
                }
                other => prop_assert!(false, "{:?}", other),
            }
        }
    }

    #[test]
    fn stderr_tail_stays_bounded(chunks in prop::collection::vec(bytes_strategy(), 0..8), long in 0usize..2500) {
        let mut tail = StderrTail::default();
        for chunk in &chunks {
            tail.push(chunk);
            tail.push(&vec![b'y'; long]);
        }
        prop_assert!(tail.held() <= (STDERR_TAIL_LINES + 1) * STDERR_LINE_MAX);
        let text = tail.text();
        prop_assert!(text.lines().count() <= STDERR_TAIL_LINES + 1, "{}", text.lines().count());
    }

    #[test]
    fn wire_checks_never_panic(line in "([{}\\[\\],:\"0-9a-z. -]|\\\\u[0-9a-f]{4}|\"jsonrpc\"|\"2.0\"|\"id\"|\"result\"|\"error\"|\"method\"|\"event\"|\"params\"|\"session\"|\"seq\"){0,60}",
                                 method in prop::sample::select(&["initialize", "session/open", "call/await", "session/close", "tools/schemas"][..]),
                                 id in 0u64..4) {
        if let Ok(value) = wire::parse(&line) {
            let _ = wire::response_id(&value);
            let _ = wire::event_session(&value);
            let _ = wire::validate_incoming(&value, method);
            let _ = wire::classify(value, id);
        }
        let _ = wire::display(&line);
    }

    #[test]
    fn expectations_parser_never_panics(entries in prop::collection::vec((
            prop::sample::select(&["id", "outcome", "reason", "issue", "reasn", "- id", "  "][..]),
            prop::sample::select(&["a", "b", "FAIL", "SKIP", "CRASH", "PASS", "", "[x]", "{}", "&a x", "*a", "'q'"][..]),
        ), 0..12), breaks in prop::collection::vec(any::<bool>(), 0..12)) {
        let mut text = String::new();
        for (i, (key, value)) in entries.iter().enumerate() {
            let start = breaks.get(i).copied().unwrap_or(false);
            text.push_str(if start { "- " } else { "  " });
            text.push_str(&format!("{key}: {value}\n"));
        }
        let known: HashSet<&str> = ["a", "b"].into_iter().collect();
        let (expectations, problems) = Expectations::parse(&text, |id| known.contains(id));
        for problem in &problems {
            prop_assert!(problem.line >= 1 && problem.line <= text.lines().count().max(1), "{problem:?} in\n{text}");
        }
        let _ = expectations.get("a");
    }
}
