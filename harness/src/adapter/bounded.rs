//! What an adapter subject keeps between two takes, bounded whatever the adapter sends
//! (`conformance/PROTOCOL.md` § Limits): the transcript (its first [`TRANSCRIPT_HEAD`] and last
//! [`TRANSCRIPT_TAIL`] lines, with a line saying how many were cut between) and the strays (at most
//! [`STRAYS_PER_SESSION`] messages a session and [`STRAYS_KEPT`] in all, then one message per session
//! counting the rest).

use std::collections::{BTreeMap, VecDeque};

use dsh_conformance::subject::Stray;

/// Transcript lines kept from the start of a trial.
pub const TRANSCRIPT_HEAD: usize = 100;
/// Transcript lines kept from the end of a trial.
pub const TRANSCRIPT_TAIL: usize = 400;
/// Stray messages kept for one session between two takes.
pub const STRAYS_PER_SESSION: usize = 20;
/// Stray messages kept in all between two takes.
pub const STRAYS_KEPT: usize = 200;

/// The protocol lines of one trial: head, tail, and how many fell between.
#[derive(Default)]
pub struct Transcript {
    head: Vec<String>,
    tail: VecDeque<String>,
    cut: usize,
}

impl Transcript {
    /// Adds a line; past the head, the oldest tail line makes room.
    pub fn push(&mut self, line: String) {
        if self.head.len() < TRANSCRIPT_HEAD {
            self.head.push(line);
            return;
        }
        if self.tail.len() == TRANSCRIPT_TAIL {
            self.tail.pop_front();
            self.cut += 1;
        }
        self.tail.push_back(line);
    }

    /// The last line added.
    pub fn last(&self) -> Option<&String> {
        self.tail.back().or_else(|| self.head.last())
    }

    /// Every line kept, with a line saying how many were cut, and starts over.
    pub fn take(&mut self) -> Vec<String> {
        let Transcript { mut head, tail, cut } = std::mem::take(self);
        if cut > 0 {
            head.push(format!(
                "(… {cut} lines cut: a transcript keeps the first {TRANSCRIPT_HEAD} and the last {TRANSCRIPT_TAIL} lines of a trial)"
            ));
        }
        head.extend(tail);
        head
    }
}

/// Strays seen since the last take, and how many were not kept.
#[derive(Default)]
pub struct Strays {
    kept: Vec<Stray>,
    /// Per session with kept messages: how many more arrived.
    cut: BTreeMap<Option<String>, usize>,
    /// Messages of sessions that had none kept when [`STRAYS_KEPT`] was reached.
    cut_elsewhere: usize,
}

impl Strays {
    /// Keeps `stray` if the bounds allow, else counts it.
    pub fn push(&mut self, stray: Stray) {
        let of_session = self.kept.iter().filter(|s| s.session == stray.session).count();
        if of_session == 0 && self.kept.len() >= STRAYS_KEPT {
            self.cut_elsewhere += 1;
        } else if of_session >= STRAYS_PER_SESSION || self.kept.len() >= STRAYS_KEPT {
            *self.cut.entry(stray.session).or_default() += 1;
        } else {
            self.kept.push(stray);
        }
    }

    /// What was kept, then one stray per session saying how many of its messages were cut (those of
    /// sessions with nothing kept are blamed on `fallback`); starts over.
    pub fn take(&mut self, fallback: Option<&String>) -> Vec<Stray> {
        let Strays { mut kept, cut, cut_elsewhere } = std::mem::take(self);
        for (session, n) in cut {
            let message = format!(
                "(… and {n} more messages of this session, not kept: at most {STRAYS_PER_SESSION} a session and {STRAYS_KEPT} in all are)"
            );
            kept.push(Stray { session, message });
        }
        if cut_elsewhere > 0 {
            let message = format!(
                "(… and {cut_elsewhere} more messages after session/close naming other sessions, not kept: at most {STRAYS_KEPT} in all are)"
            );
            kept.push(Stray { session: fallback.cloned(), message });
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_transcript_keeps_its_ends_and_counts_the_middle() {
        let mut t = Transcript::default();
        for i in 0..10_000 {
            t.push(i.to_string());
        }
        let lines = t.take();
        assert_eq!(lines.len(), TRANSCRIPT_HEAD + 1 + TRANSCRIPT_TAIL);
        assert_eq!(lines[0], "0");
        assert!(lines[TRANSCRIPT_HEAD].contains("9500 lines cut"), "{}", lines[TRANSCRIPT_HEAD]);
        assert_eq!(lines.last().map(String::as_str), Some("9999"));
        assert!(t.take().is_empty());
    }

    #[test]
    fn strays_are_bounded_per_session_and_in_all() {
        let mut s = Strays::default();
        for i in 0..1000 {
            s.push(Stray { session: Some("a".into()), message: i.to_string() });
        }
        for i in 0..1000 {
            s.push(Stray { session: Some(format!("s{i}")), message: i.to_string() });
        }
        let taken = s.take(Some(&"last".to_owned()));
        assert_eq!(taken.len(), STRAYS_KEPT + 2, "kept, one count for `a`, one for the sessions not kept");
        assert!(taken.iter().any(|t| t.session.as_deref() == Some("a") && t.message.contains("980 more")));
        assert!(taken.iter().any(|t| t.session.as_deref() == Some("last") && t.message.contains("820 more")));
        assert!(s.take(None).is_empty());
    }
}
