//! Identifier classes and NFKC as the upstream engine sees them (Unicode 17.0 tables, see
//! [`super::unicode_tables`]): the Python flavor's identifier verdicts and class names depend on them.
//!
//! Spec: SDK-009, SDK-019, SDK-020 (identifier tables and NFKC).

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

use super::unicode_tables::{UNASSIGNED, XID_CONTINUE, XID_START};

fn in_ranges(table: &[(u32, u32)], c: char) -> bool {
    let cp = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// `\p{XID_Start}` on the engine's tables.
pub(crate) fn is_xid_start(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphabetic()
    } else {
        in_ranges(&XID_START, c)
    }
}

/// `\p{XID_Continue}` on the engine's tables.
pub(crate) fn is_xid_continue(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        in_ranges(&XID_CONTINUE, c)
    }
}

/// A code point the engine does not know: normalization leaves it alone and it blocks nothing, exactly
/// like a starter with no decomposition (which is what the engine takes it for).
fn is_unassigned(c: char) -> bool {
    !c.is_ascii() && in_ranges(&UNASSIGNED, c)
}

/// NFKC with the engine's repertoire. Code points assigned after the engine's Unicode version are kept
/// verbatim and split the text into independently normalized runs (stability guarantees the rest).
pub(crate) fn nfkc(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        return Cow::Borrowed(s);
    }
    if !s.chars().any(is_unassigned) {
        if unicode_normalization::is_nfkc_quick(s.chars()) == unicode_normalization::IsNormalized::Yes {
            return Cow::Borrowed(s);
        }
        let normalized: String = s.nfkc().collect();
        return if normalized == s { Cow::Borrowed(s) } else { Cow::Owned(normalized) };
    }
    let mut out = String::with_capacity(s.len());
    let mut run_start = 0;
    for (index, c) in s.char_indices() {
        if is_unassigned(c) {
            out.extend(s[run_start..index].nfkc());
            out.push(c);
            run_start = index + c.len_utf8();
        }
    }
    out.extend(s[run_start..].nfkc());
    if out == s { Cow::Borrowed(s) } else { Cow::Owned(out) }
}

/// Whether NFKC leaves the text unchanged.
pub(crate) fn is_nfkc_stable(s: &str) -> bool {
    matches!(nfkc(s), Cow::Borrowed(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_tables_not_crate_tables() {
        // U+0558 is XID_Start from Unicode 18 on; the engine (17.0) rejects it.
        assert!(!is_xid_start('\u{558}'));
        assert!(is_xid_start('路'));
        assert!(is_xid_continue('\u{200C}'));
        assert!(!is_xid_start('_'));
        assert!(is_xid_continue('_'));
        assert_eq!(nfkc("ﬁeld"), "field");
        assert_eq!(nfkc("a\u{209D}b"), "a\u{209D}b");
        assert!(is_nfkc_stable("路径"));
    }
}
