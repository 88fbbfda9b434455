//! A streaming scan of a JSON text that is already known to be valid (`json::check_syntax`): the byte spans
//! of the top-level array's elements and of an object's members, found without building any value. The
//! corpus index (`corpus_index.rs`) uses it to name the trials of a large corpus file without parsing it.
//!
//! Depth: nesting is followed with a counter, never recursion, so 100,000-deep values cost nothing but
//! the pass over their bytes.

use std::ops::Range;

/// The spans of the elements of the top-level array of `text`, in order; `None` when the text is not an
/// array (or not valid JSON after all).
pub(crate) fn array_items(text: &str) -> Option<Vec<Range<usize>>> {
    let bytes = text.as_bytes();
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    at = skip_ws(bytes, at + 1);
    let mut items = Vec::new();
    if bytes.get(at) == Some(&b']') {
        return Some(items);
    }
    loop {
        let end = value_end(bytes, at)?;
        items.push(at..end);
        at = skip_ws(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_ws(bytes, at + 1),
            Some(b']') => return Some(items),
            _ => return None,
        }
    }
}

/// The members of the object spanning `span` of `text`: each key (decoded) with the span of its value, in
/// order; `None` when the span is not an object.
pub(crate) fn object_members(text: &str, span: Range<usize>) -> Option<Vec<(String, Range<usize>)>> {
    let bytes = text.as_bytes().get(..span.end)?;
    let mut at = skip_ws(bytes, span.start);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_ws(bytes, at + 1);
    let mut members = Vec::new();
    if bytes.get(at) == Some(&b'}') {
        return Some(members);
    }
    loop {
        let key_end = string_end(bytes, at)?;
        let key: String = serde_json::from_str(text.get(at..key_end)?).ok()?;
        at = skip_ws(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = skip_ws(bytes, at + 1);
        let end = value_end(bytes, at)?;
        members.push((key, at..end));
        at = skip_ws(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_ws(bytes, at + 1),
            Some(b'}') => return Some(members),
            _ => return None,
        }
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The end of the string starting at `at` (just past its closing quote).
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The end of the value starting at `at`: a string, a container (brackets counted, strings skipped) or a
/// scalar (up to the next delimiter).
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match bytes.get(i)? {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while !matches!(bytes.get(i), None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')) {
                i += 1;
            }
            (i > at).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_and_members_are_the_spans_serde_reads() {
        let text = r#" [ {"a": [1, {"b": "x\"]}"}], "c\\": -1.5e3}, "s", [[[]]], null ] "#;
        let items = array_items(text).expect("an array");
        let parsed: Vec<serde_json::Value> = items.iter().map(|r| serde_json::from_str(&text[r.clone()]).expect("a value")).collect();
        assert_eq!(serde_json::Value::Array(parsed), serde_json::from_str::<serde_json::Value>(text).expect("valid"));
        let members = object_members(text, items[0].clone()).expect("an object");
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "c\\"]);
        assert_eq!(&text[members[1].1.clone()], "-1.5e3");
        assert_eq!(object_members(text, items[1].clone()), None);
    }

    #[test]
    fn a_deep_value_is_one_span() {
        let deep = format!("[{}{}, 1]", "[".repeat(200_000), "]".repeat(200_000));
        let items = array_items(&deep).expect("an array");
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].len(), 400_000);
    }
}
