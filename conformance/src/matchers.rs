//! Comparing an expectation with what the subject reported (`spec/README.md` § Results and matchers):
//! exact or subset (`resultIncludes`: only the keys it names, recursively in mappings; lists always
//! exactly), with the matchers `{ $any: true }`, `{ $regex: "..." }`, `{ $repeat: { text, times, suffix? } }`
//! (a string that is `text` exactly `times` times, then `suffix`: a 64 MiB log checked whole at memory
//! speed), `{ $ordered: V }` (V exactly, with every mapping's keys in V's order) and `{ $nested: { depth,
//! key?, leaf } }` (a value wrapped `depth` times around `leaf`: `nested.rs`) allowed anywhere in the
//! expectation. The walk uses an explicit stack: the actual value may be arbitrarily deep.

use std::fmt::Write as _;

use regex::Regex;
use serde_json::Value;

use crate::json;
use crate::nested::Nested;

/// How mappings compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchMode {
    /// Every key on both sides.
    Exact,
    /// Only the keys the expectation names (lists still exact).
    Includes,
    /// Every key on both sides, in the same order, at every depth (for outputs whose key order upstream
    /// defines: compiled schemas, `{ $ordered: V }`).
    Ordered,
}

/// Why a comparison did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchError {
    /// The values differ: the first difference's path (`$.content[0].text`) and what differs there.
    Mismatch {
        /// Path of the first difference.
        path: String,
        /// What differs.
        what: String,
    },
    /// The expectation itself is broken (a `$regex` that does not compile, a malformed matcher):
    /// `ERROR(scenario)`.
    BadMatcher {
        /// Path of the matcher.
        path: String,
        /// What is wrong.
        message: String,
    },
}

enum Matcher<'a> {
    Any,
    Regex(&'a str),
    Repeat(Repeat<'a>),
    Ordered(&'a Value),
    Nested(Nested<'a>),
}

/// `{ $repeat: { text, times, suffix? } }`: `text` exactly `times` times, then `suffix` (default empty).
struct Repeat<'a> {
    text: &'a str,
    times: u64,
    suffix: &'a str,
}

impl Repeat<'_> {
    fn parse(spec: &serde_json::Map<String, Value>) -> Result<Repeat<'_>, String> {
        const SHAPE: &str = "`$repeat` takes { text: string, times: non-negative integer, suffix?: string }";
        if let Some(other) = spec.keys().find(|k| !matches!(k.as_str(), "text" | "times" | "suffix")) {
            return Err(format!("{SHAPE}; unknown key {other:?}"));
        }
        let text = spec.get("text").and_then(Value::as_str).ok_or(SHAPE)?;
        let times = spec.get("times").and_then(Value::as_u64).ok_or(SHAPE)?;
        let suffix = match spec.get("suffix") {
            None => "",
            Some(suffix) => suffix.as_str().ok_or(SHAPE)?,
        };
        Ok(Repeat { text, times, suffix })
    }

    /// Whether `s` is exactly this repetition. The body is compared a few kilobytes of repeated text at a
    /// time, so a 64 MiB string costs milliseconds (a regular expression walks it a byte at a time).
    fn matches(&self, s: &str) -> bool {
        let body_len = (self.text.len() as u64).checked_mul(self.times).and_then(|n| usize::try_from(n).ok());
        let Some(body_len) = body_len else { return false };
        if s.len() != body_len.saturating_add(self.suffix.len()) || !s.ends_with(self.suffix) {
            return false;
        }
        let body = &s.as_bytes()[..body_len];
        if self.text.is_empty() {
            return true;
        }
        let block = self.text.repeat((4096 / self.text.len()).max(1)).into_bytes();
        let mut chunks = body.chunks_exact(block.len());
        let whole = chunks.by_ref().all(|chunk| chunk == block.as_slice());
        // The rest is a whole number of `text`s, since both lengths are.
        whole && chunks.remainder() == &block[..chunks.remainder().len()]
    }

    fn describe(&self) -> String {
        let suffix = if self.suffix.is_empty() { String::new() } else { format!(" then {:?}", self.suffix) };
        format!("{:?} repeated {} times{suffix}", self.text, self.times)
    }
}

/// A mapping with a single `$`-key is a matcher; `Err` for an unknown `$`-key.
fn matcher(v: &Value) -> Result<Option<Matcher<'_>>, String> {
    let Value::Object(m) = v else { return Ok(None) };
    if m.len() != 1 {
        return Ok(None);
    }
    let Some((k, arg)) = m.iter().next() else { return Ok(None) };
    match (k.as_str(), arg) {
        ("$any", Value::Bool(true)) => Ok(Some(Matcher::Any)),
        ("$any", _) => Err("`$any` takes `true`".into()),
        ("$regex", Value::String(re)) => Ok(Some(Matcher::Regex(re))),
        ("$regex", _) => Err("`$regex` takes a string".into()),
        ("$repeat", Value::Object(spec)) => Repeat::parse(spec).map(|r| Some(Matcher::Repeat(r))),
        ("$repeat", _) => Err("`$repeat` takes { text: string, times: non-negative integer, suffix?: string }".into()),
        ("$ordered", v) => Ok(Some(Matcher::Ordered(v))),
        ("$nested", v) => Nested::parse(v).map(|n| Some(Matcher::Nested(n))),
        (k, _) if k.starts_with('$') => Err(format!("unknown matcher {k:?}")),
        _ => Ok(None),
    }
}

/// Whether `expected` holds no matcher and equals `actual` (in `mode`'s key order: the same order at every
/// depth for [`MatchMode::Ordered`]) — then it matches — decided without the walk below, which keeps a path
/// for every node (a 100,000-level compiled schema is compared whole). Any matcher (a one-member object
/// whose key starts with `$`) leaves it to that walk.
fn plainly_equal(expected: &Value, actual: &Value, mode: MatchMode) -> bool {
    crate::json::deep_eq_where(expected, actual, |e, a| {
        let matcher = e.len() == 1 && e.keys().any(|k| k.starts_with('$'));
        !matcher && (mode != MatchMode::Ordered || e.keys().eq(a.keys()))
    })
}

fn short(v: &Value) -> String {
    match v {
        Value::Array(_) | Value::Object(_) => json::kind(v).to_string(),
        scalar => crate::diff::cut(&json::write(scalar, false), crate::diff::MAX_LINE_LEN),
    }
}

fn key_path(path: &str, key: &str) -> String {
    let mut out = path.to_owned();
    push_key(&mut out, key);
    out
}

/// Appends `.key`, or `["key"]` when the key is not a plain identifier.
fn push_key(path: &mut String, key: &str) {
    if key.chars().all(|c| c.is_alphanumeric() || c == '_') && !key.is_empty() {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&json::write(&Value::String(key.to_string()), false));
        path.push(']');
    }
}

/// One step below its parent.
enum Seg<'a> {
    Root,
    Key(&'a str),
    Index(usize),
    /// `n` levels of a `$nested` wrapper: `[0]` each, or `.key` each.
    Levels(u64, Option<&'a str>),
}

/// Paths kept as parent links and written out only for the error: writing every path while descending
/// costs the square of the depth, which a 100,000-level value turns into minutes.
struct Paths<'a> {
    nodes: Vec<(usize, Seg<'a>)>,
}

impl<'a> Paths<'a> {
    const ROOT: usize = 0;

    fn new() -> Self {
        Paths { nodes: vec![(0, Seg::Root)] }
    }

    fn child(&mut self, parent: usize, seg: Seg<'a>) -> usize {
        self.nodes.push((parent, seg));
        self.nodes.len() - 1
    }

    fn render(&self, mut id: usize) -> String {
        let mut segs = Vec::new();
        loop {
            let (parent, seg) = &self.nodes[id];
            if matches!(seg, Seg::Root) {
                break;
            }
            segs.push(seg);
            id = *parent;
        }
        let mut path = String::from("$");
        for seg in segs.into_iter().rev() {
            match seg {
                Seg::Key(key) => push_key(&mut path, key),
                Seg::Index(i) => {
                    let _ = write!(path, "[{i}]");
                }
                Seg::Levels(n, key) => {
                    let mut one = String::new();
                    match key {
                        None => one.push_str("[0]"),
                        Some(k) => push_key(&mut one, k),
                    }
                    let _ = write!(path, "({one}×{n})");
                }
                Seg::Root => {}
            }
        }
        path
    }
}

/// Compares `actual` with `expected`.
pub fn check(expected: &Value, actual: &Value, mode: MatchMode) -> Result<(), MatchError> {
    if plainly_equal(expected, actual, mode) {
        return Ok(());
    }
    let mut paths = Paths::new();
    let mut stack = vec![(expected, actual, mode, Paths::ROOT)];
    while let Some((e, a, mode, at)) = stack.pop() {
        match matcher(e) {
            Err(message) => return Err(MatchError::BadMatcher { path: paths.render(at), message }),
            Ok(Some(Matcher::Any)) => continue,
            Ok(Some(Matcher::Ordered(inner))) => {
                stack.push((inner, a, MatchMode::Ordered, at));
                continue;
            }
            Ok(Some(Matcher::Regex(re))) => {
                let re = Regex::new(re)
                    .map_err(|err| MatchError::BadMatcher { path: paths.render(at), message: err.to_string() })?;
                let path = paths.render(at);
                match a {
                    Value::String(s) if re.is_match(s) => continue,
                    Value::String(_) => {
                        return Err(MatchError::Mismatch { path, what: format!("{} does not match /{re}/", short(a)) });
                    }
                    _ => return Err(MatchError::Mismatch { path, what: format!("expected a string matching /{re}/, got {}", json::kind(a)) }),
                }
            }
            Ok(Some(Matcher::Nested(nested))) => {
                let leaf = nested.unwrap(a);
                // One path node for the levels walked, written `[0]×N`: a mismatch names the exact level
                // without a path as long as the value is deep.
                let walked = match &leaf {
                    Ok(_) => nested.depth,
                    Err((level, _)) => *level,
                };
                let at = if walked == 0 { at } else { paths.child(at, Seg::Levels(walked, nested.key)) };
                match leaf {
                    Ok(inner) => {
                        let lists = nested.key.is_none() && nested.depth > 0;
                        let mode = if lists && mode == MatchMode::Includes { MatchMode::Exact } else { mode };
                        stack.push((nested.leaf, inner, mode, at));
                        continue;
                    }
                    Err((level, what)) => {
                        let what = format!("{what} at level {level} of {}", nested.describe());
                        return Err(MatchError::Mismatch { path: paths.render(at), what });
                    }
                }
            }
            Ok(Some(Matcher::Repeat(repeat))) => match a {
                Value::String(s) if repeat.matches(s) => continue,
                _ => {
                    let got = match a {
                        Value::String(s) => format!("{} ({} bytes)", short(a), s.len()),
                        other => json::kind(other).to_owned(),
                    };
                    let what = format!("expected {}, got {got}", repeat.describe());
                    return Err(MatchError::Mismatch { path: paths.render(at), what });
                }
            },
            Ok(None) => {}
        }
        match (e, a) {
            (Value::Object(em), Value::Object(am)) => {
                if mode != MatchMode::Includes {
                    if let Some(extra) = am.keys().find(|k| !em.contains_key(*k)) {
                        let path = key_path(&paths.render(at), extra);
                        return Err(MatchError::Mismatch { path, what: "unexpected key".into() });
                    }
                }
                if mode == MatchMode::Ordered && em.len() == am.len() && !em.keys().eq(am.keys()) {
                    let order = |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<Vec<_>>().join(", ");
                    let what = format!("keys out of order: expected [{}], got [{}]", order(em), order(am));
                    return Err(MatchError::Mismatch { path: paths.render(at), what });
                }
                // Reverse so the first key is checked first.
                for (k, ev) in em.iter().rev() {
                    match am.get(k) {
                        Some(av) => {
                            let child = paths.child(at, Seg::Key(k));
                            stack.push((ev, av, mode, child));
                        }
                        None => {
                            let path = key_path(&paths.render(at), k);
                            return Err(MatchError::Mismatch { path, what: "missing key".into() });
                        }
                    }
                }
            }
            (Value::Array(el), Value::Array(al)) => {
                if el.len() != al.len() {
                    let what = format!("expected {} items, got {}", el.len(), al.len());
                    return Err(MatchError::Mismatch { path: paths.render(at), what });
                }
                for (i, (ev, av)) in el.iter().zip(al.iter()).enumerate().rev() {
                    let child = paths.child(at, Seg::Index(i));
                    let mode = if mode == MatchMode::Ordered { MatchMode::Ordered } else { MatchMode::Exact };
                    stack.push((ev, av, mode, child));
                }
            }
            (Value::Number(x), Value::Number(y)) => {
                // 1 and 1.0 are the same JSON number.
                if x != y && x.as_f64() != y.as_f64() {
                    return Err(MatchError::Mismatch { path: paths.render(at), what: format!("expected {x}, got {y}") });
                }
            }
            (e, a) => {
                if std::mem::discriminant(e) != std::mem::discriminant(a) {
                    let what = format!("expected {}, got {}", json::kind(e), json::kind(a));
                    return Err(MatchError::Mismatch { path: paths.render(at), what });
                }
                if e != a {
                    let what = format!("expected {}, got {}", short(e), short(a));
                    return Err(MatchError::Mismatch { path: paths.render(at), what });
                }
            }
        }
    }
    Ok(())
}

/// The two texts to diff for a mismatch, pretty-printed: the expectation with every matcher that
/// matched replaced by the actual value (when shallow), and the actual value, cut down in `Includes`
/// mode to the keys the expectation names.
pub fn display_pair(expected: &Value, actual: &Value, mode: MatchMode) -> (String, String) {
    let shown_actual = match mode {
        MatchMode::Includes => json::write(&cut(actual, expected, 0), true),
        MatchMode::Exact | MatchMode::Ordered => json::write(actual, true),
    };
    (json::write(&shown_expectation(expected, actual, 0), true), shown_actual)
}

/// Depth of the expectation walked by the display helpers; they recurse, bounded by this (the
/// expectation's own depth is capped by the loader).
const DISPLAY_DEPTH: usize = 200;
/// Actual subtrees copied into a display only up to this depth.
const SHALLOW: usize = 64;

fn shown_expectation(e: &Value, a: &Value, depth: usize) -> Value {
    if depth > DISPLAY_DEPTH {
        return e.clone();
    }
    if let Ok(Some(m)) = matcher(e) {
        let matched = match m {
            Matcher::Any => true,
            Matcher::Regex(re) => matches!((Regex::new(re), a), (Ok(r), Value::String(s)) if r.is_match(s)),
            Matcher::Repeat(repeat) => matches!(a, Value::String(s) if repeat.matches(s)),
            Matcher::Ordered(inner) => return shown_expectation(inner, a, depth + 1),
            Matcher::Nested(nested) => matches!(nested.unwrap(a), Ok(inner) if check(nested.leaf, inner, MatchMode::Exact).is_ok()),
        };
        return if matched && json::depth(a) <= SHALLOW { a.clone() } else { e.clone() };
    }
    match (e, a) {
        (Value::Object(em), Value::Object(am)) => Value::Object(
            em.iter()
                .map(|(k, ev)| (k.clone(), am.get(k).map_or_else(|| ev.clone(), |av| shown_expectation(ev, av, depth + 1))))
                .collect(),
        ),
        (Value::Array(el), Value::Array(al)) if el.len() == al.len() => {
            Value::Array(el.iter().zip(al).map(|(x, y)| shown_expectation(x, y, depth + 1)).collect())
        }
        _ => e.clone(),
    }
}

fn cut(a: &Value, e: &Value, depth: usize) -> Value {
    match (a, e) {
        (Value::Object(am), Value::Object(em)) if depth < DISPLAY_DEPTH && matches!(matcher(e), Ok(None)) => {
            Value::Object(em.iter().filter_map(|(k, ev)| am.get(k).map(|av| (k.clone(), cut(av, ev, depth + 1)))).collect())
        }
        _ if json::depth(a) <= SHALLOW => a.clone(),
        _ => Value::String(format!("<{} nested {} levels deep>", json::kind(a), json::depth(a))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(e: Value, a: Value, mode: MatchMode) -> bool {
        check(&e, &a, mode).is_ok()
    }

    #[test]
    fn ordered_compares_key_order_at_every_depth() {
        let e = json!({ "$ordered": { "type": "object", "properties": { "a": { "x": 1, "y": 2 } } } });
        assert!(ok(e.clone(), json!({ "type": "object", "properties": { "a": { "x": 1, "y": 2 } } }), MatchMode::Exact));
        assert!(!ok(e.clone(), json!({ "properties": { "a": { "x": 1, "y": 2 } }, "type": "object" }), MatchMode::Exact));
        assert!(!ok(e.clone(), json!({ "type": "object", "properties": { "a": { "y": 2, "x": 1 } } }), MatchMode::Exact));
        // Inside lists too; and without $ordered the order is free.
        assert!(!ok(json!({ "$ordered": [{ "a": 1, "b": 2 }] }), json!([{ "b": 2, "a": 1 }]), MatchMode::Exact));
        assert!(ok(json!([{ "a": 1, "b": 2 }]), json!([{ "b": 2, "a": 1 }]), MatchMode::Exact));
        // The mode itself, on values equal but for key order (the plainly-equal shortcut must see the order).
        let (e, a) = (json!({ "x": [{ "a": 1, "b": 2 }] }), json!({ "x": [{ "b": 2, "a": 1 }] }));
        assert!(!ok(e.clone(), a.clone(), MatchMode::Ordered));
        assert!(ok(e.clone(), a.clone(), MatchMode::Exact) && ok(e.clone(), e.clone(), MatchMode::Ordered));
    }

    #[test]
    fn exact_and_includes() {
        let actual = json!({"isError": false, "value": {"a": 1, "b": [1, {"c": 2, "d": 3}]}, "content": []});
        assert!(ok(actual.clone(), actual.clone(), MatchMode::Exact));
        assert!(!ok(json!({"isError": false}), actual.clone(), MatchMode::Exact));
        assert!(ok(json!({"isError": false}), actual.clone(), MatchMode::Includes));
        assert!(ok(json!({"value": {"a": 1}}), actual.clone(), MatchMode::Includes));
        // lists are always exact, even under Includes
        assert!(!ok(json!({"value": {"b": [1, {"c": 2}]}}), actual.clone(), MatchMode::Includes));
        assert_eq!(
            check(&json!({"value": {"b": [1, {"c": 5, "d": 3}]}}), &actual, MatchMode::Includes),
            Err(MatchError::Mismatch { path: "$.value.b[1].c".into(), what: "expected 5, got 2".into() })
        );
        assert!(ok(json!(1.0), json!(1), MatchMode::Exact));
        assert!(!ok(json!("1"), json!(1), MatchMode::Exact));
    }

    #[test]
    fn nested_walks_every_level_and_names_the_one_that_differs() {
        let deep = |n: usize, leaf: Value| (0..n).fold(leaf, |v, _| Value::Array(vec![v]));
        let e = json!({ "deep": { "$nested": { "depth": 5000, "leaf": [] } } });
        // Deep values are taken apart without recursion (`json::dismantle`), as the checker's are.
        for (depth, want) in [(5000, true), (4999, false), (5001, false)] {
            let actual = Value::Object(std::iter::once(("deep".to_owned(), deep(depth, json!([])))).collect());
            assert_eq!(check(&e, &actual, MatchMode::Exact).is_ok(), want, "depth {depth}");
            json::dismantle(actual);
        }
        let Err(MatchError::Mismatch { path, what }) = check(&e, &Value::Object(std::iter::once(("deep".to_owned(), deep(3, json!([1, 2])))).collect()), MatchMode::Exact) else {
            panic!("expected a mismatch");
        };
        assert_eq!(path, "$.deep([0]×3)");
        assert_eq!(what, "expected a one-item list, got a list of 2 items at level 3 of 5000 levels of a one-item list");
        let keyed = json!({ "$nested": { "depth": 2, "key": "k", "leaf": { "$any": true } } });
        assert!(ok(keyed.clone(), json!({ "k": { "k": 7 } }), MatchMode::Includes));
        assert!(!ok(keyed, json!({ "k": { "k": 7, "x": 1 } }), MatchMode::Includes));
        assert!(matches!(check(&json!({ "$nested": { "depth": 1 } }), &json!([1]), MatchMode::Exact), Err(MatchError::BadMatcher { .. })));
    }

    #[test]
    fn matchers_anywhere() {
        let actual = json!({"error": {"message": "boom", "stack": "Error: boom\n  at x"}, "n": [1, 2]});
        assert!(ok(json!({"error": {"message": "boom", "stack": {"$regex": "^Error: boom"}}, "n": {"$any": true}}), actual.clone(), MatchMode::Exact));
        assert!(matches!(
            check(&json!({"error": {"$any": true}, "n": [1, {"$regex": "x"}]}), &actual, MatchMode::Exact),
            Err(MatchError::Mismatch { path, .. }) if path == "$.n[1]"
        ));
        assert!(matches!(check(&json!({"$regex": "("}), &json!("x"), MatchMode::Exact), Err(MatchError::BadMatcher { .. })));
        assert!(matches!(check(&json!({"$anything": 1}), &json!("x"), MatchMode::Exact), Err(MatchError::BadMatcher { .. })));
        assert!(matches!(check(&json!({"$any": false}), &json!("x"), MatchMode::Exact), Err(MatchError::BadMatcher { .. })));
        // a two-key mapping with a `$` key is an ordinary mapping
        assert!(ok(json!({"$any": true, "b": 1}), json!({"$any": true, "b": 1}), MatchMode::Exact));
    }

    #[test]
    fn repeat_matches_the_whole_string() {
        let rep = |spec: Value| json!({ "$repeat": spec });
        let xs = "x".repeat(10_000);
        assert!(ok(rep(json!({ "text": "x", "times": 10_000 })), json!(xs), MatchMode::Exact));
        assert!(ok(rep(json!({ "text": "x", "times": 10_000, "suffix": "\n7" })), json!(format!("{xs}\n7")), MatchMode::Exact));
        assert!(ok(rep(json!({ "text": "ab", "times": 3 })), json!("ababab"), MatchMode::Exact));
        assert!(ok(rep(json!({ "text": "", "times": 5, "suffix": "s" })), json!("s"), MatchMode::Exact));
        assert!(ok(rep(json!({ "text": "é", "times": 2 })), json!("éé"), MatchMode::Exact));
        // One byte short or long, a wrong byte deep inside (past the first block, and in the tail), a
        // missing suffix, a text that does not tile the string, a non-string.
        assert!(!ok(rep(json!({ "text": "x", "times": 10_000 })), json!(&xs[1..]), MatchMode::Exact));
        assert!(!ok(rep(json!({ "text": "x", "times": 10_000 })), json!(format!("{xs}x")), MatchMode::Exact));
        for at in [5_000, 9_999] {
            let mut bad = xs.clone().into_bytes();
            bad[at] = b'y';
            let bad = String::from_utf8(bad).unwrap();
            assert!(!ok(rep(json!({ "text": "x", "times": 10_000 })), json!(bad), MatchMode::Exact), "wrong byte at {at}");
        }
        assert!(!ok(rep(json!({ "text": "x", "times": 10_000, "suffix": "\n7" })), json!(format!("{xs}\n8")), MatchMode::Exact));
        assert!(!ok(rep(json!({ "text": "ab", "times": 3 })), json!("abbaab"), MatchMode::Exact));
        assert_eq!(
            check(&rep(json!({ "text": "x", "times": 3 })), &json!([1]), MatchMode::Exact),
            Err(MatchError::Mismatch { path: "$".into(), what: "expected \"x\" repeated 3 times, got a list".into() })
        );
        assert_eq!(
            check(&json!({ "a": rep(json!({ "text": "x", "times": 3, "suffix": "!" })) }), &json!({ "a": "xx!" }), MatchMode::Exact),
            Err(MatchError::Mismatch { path: "$.a".into(), what: "expected \"x\" repeated 3 times then \"!\", got \"xx!\" (3 bytes)".into() })
        );
        for bad in [json!("x"), json!({ "text": "x" }), json!({ "text": "x", "times": -1 }), json!({ "text": "x", "times": 2, "end": "" })] {
            assert!(matches!(check(&rep(bad.clone()), &json!("xx"), MatchMode::Exact), Err(MatchError::BadMatcher { .. })), "{bad}");
        }
    }

    #[test]
    fn missing_and_unexpected_keys_are_named() {
        assert_eq!(
            check(&json!({"a": 1}), &json!({"a": 1, "b-c": 2}), MatchMode::Exact),
            Err(MatchError::Mismatch { path: "$[\"b-c\"]".into(), what: "unexpected key".into() })
        );
        assert_eq!(
            check(&json!({"a": 1, "z": 2}), &json!({"a": 1}), MatchMode::Includes),
            Err(MatchError::Mismatch { path: "$.z".into(), what: "missing key".into() })
        );
    }

    #[test]
    fn display_pair_hides_what_matched() {
        let (e, a) = display_pair(&json!({"x": {"$any": true}, "y": 1}), &json!({"x": 5, "y": 2, "z": 3}), MatchMode::Includes);
        assert_eq!(e, "{\n  \"x\": 5,\n  \"y\": 1\n}");
        assert_eq!(a, "{\n  \"x\": 5,\n  \"y\": 2\n}");
    }
}
