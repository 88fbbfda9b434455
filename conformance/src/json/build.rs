//! Building a `serde_json::Value` from JSON text in one pass with an explicit stack: no recursion, so no
//! depth limit, no stack to grow for a 100,000-level corpus item, and nothing dropped recursively when the
//! text is broken half-way (what is built so far is taken apart with [`crate::json::dismantle`]).
//!
//! It is [`crate::json::parse_line`]'s fast path and gives the very value serde_json gives (the same
//! numbers, since each number's text is handed to serde_json; the same map order and duplicate-key
//! handling, the last value at the first key's place). It does not explain errors: on anything it does not
//! accept it answers `None`, and `parse_line` asks serde_json for the error message.

use serde_json::{Map, Value};

use super::dismantle;

/// A container still open.
enum Open {
    Array(Vec<Value>),
    /// A mapping and the key whose value is being read.
    Object(Map<String, Value>, String),
}

/// The value `text` holds (whitespace allowed around it), or `None` when it is not exactly one JSON value.
pub(crate) fn parse(text: &str) -> Option<Value> {
    let mut open: Vec<Open> = Vec::new();
    let built = build(&mut Reader { text, at: 0 }, &mut open);
    if built.is_none() {
        for container in open {
            match container {
                Open::Array(items) => dismantle(Value::Array(items)),
                Open::Object(map, _) => dismantle(Value::Object(map)),
            }
        }
    }
    built
}

fn build(r: &mut Reader<'_>, open: &mut Vec<Open>) -> Option<Value> {
    loop {
        // A value starts here: a scalar, an empty container, or the first member of a container.
        r.skip_ws();
        let mut value = match r.peek()? {
            b'{' => {
                r.at += 1;
                r.skip_ws();
                if r.eat(b'}') {
                    Value::Object(Map::new())
                } else {
                    let key = r.key()?;
                    open.push(Open::Object(Map::new(), key));
                    continue;
                }
            }
            b'[' => {
                r.at += 1;
                r.skip_ws();
                if r.eat(b']') {
                    Value::Array(Vec::new())
                } else {
                    open.push(Open::Array(Vec::new()));
                    continue;
                }
            }
            _ => r.scalar()?,
        };
        // Hand the value to the container it ends, closing every container that ends with it.
        loop {
            r.skip_ws();
            match open.last_mut() {
                None => return (r.at == r.text.len()).then_some(value),
                Some(Open::Array(items)) => {
                    items.push(value);
                    if r.eat(b',') {
                        break;
                    }
                    if !r.eat(b']') {
                        return None;
                    }
                    let Some(Open::Array(items)) = open.pop() else { return None };
                    value = Value::Array(items);
                }
                Some(Open::Object(map, key)) => {
                    map.insert(std::mem::take(key), value);
                    if r.eat(b',') {
                        r.skip_ws();
                        *key = r.key()?;
                        break;
                    }
                    if !r.eat(b'}') {
                        return None;
                    }
                    let Some(Open::Object(map, _)) = open.pop() else { return None };
                    value = Value::Object(map);
                }
            }
        }
    }
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        self.at += usize::from(hit);
        hit
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A member's key and the colon after it.
    fn key(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let key = self.string()?;
        self.skip_ws();
        self.eat(b':').then_some(key)
    }

    /// A string starting at the opening quote: copied as it is when it has no escapes, else decoded by
    /// serde_json. A raw control character is an error, as in serde_json.
    fn string(&mut self) -> Option<String> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut i = start + 1;
        let mut escaped = false;
        loop {
            match *bytes.get(i)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                0..=0x1f => return None,
                _ => i += 1,
            }
        }
        self.at = i + 1;
        if escaped {
            serde_json::from_str::<String>(self.text.get(start..=i)?).ok()
        } else {
            self.text.get(start + 1..i).map(str::to_owned)
        }
    }

    /// A string, a number, `true`, `false` or `null`.
    fn scalar(&mut self) -> Option<Value> {
        let rest = self.text.get(self.at..)?;
        for (word, value) in [("true", Value::Bool(true)), ("false", Value::Bool(false)), ("null", Value::Null)] {
            if rest.starts_with(word) {
                self.at += word.len();
                return Some(value);
            }
        }
        match self.peek()? {
            b'"' => self.string().map(Value::String),
            b'-' | b'0'..=b'9' => {
                let len = rest.bytes().take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')).count();
                self.at += len;
                // serde_json reads the number, so it is the number serde_json would build.
                match serde_json::from_str::<Value>(rest.get(..len)?).ok()? {
                    number @ Value::Number(_) => Some(number),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn serde(text: &str) -> Option<Value> {
        let mut de = serde_json::Deserializer::from_str(text);
        de.disable_recursion_limit();
        let value = serde::Deserialize::deserialize(&mut de).ok()?;
        de.end().ok().map(|()| value)
    }

    /// The same value, and the same key order at every depth.
    fn same(a: &Value, b: &Value) -> bool {
        super::super::deep_eq_where(a, b, |x, y| x.keys().eq(y.keys()))
    }

    fn agrees(text: &str) {
        match (parse(text), serde(text)) {
            (Some(mine), Some(theirs)) => assert!(same(&mine, &theirs), "{text:?}: {mine} vs {theirs}"),
            (None, None) => {}
            (mine, theirs) => panic!("{text:?}: built {mine:?}, serde_json {theirs:?}"),
        }
    }

    #[test]
    fn the_same_values_as_serde_json() {
        for text in [
            "0", "-0", "1.5e3", "-12.25E-2", "123456789012345678901234567890", "0.1", "5e-324",
            "true", " false ", "null", "\"\"", "\"a\\u00e9\\n\\\"\"", "\"\\ud83d\\ude00\"", "[]", "{}", " [ 1 , [ ] , { } ] ",
            "{\"a\":1,\"b\":{\"c\":[true,null]},\"a\":2}", "{\"z\":0,\"a\":1}", "[\"é\", \"\\\\\"]",
        ] {
            assert!(parse(text).is_some(), "{text:?}");
            agrees(text);
        }
    }

    #[test]
    fn rejects_what_serde_json_rejects() {
        for text in [
            "", " ", "01", "1.", ".5", "-", "+1", "1e", "--1", "tru", "nul", "[1,]", "[1 2]", "{\"a\"}", "{\"a\":}",
            "{\"a\":1,}", "{a:1}", "[", "{", "]", "[1]]", "1 2", "\"\\x\"", "\"\u{1}\"", "\"abc", "\"\\ud800\"",
            "[1,{\"a\":[2,", "1e400", "{\"a\":1 \"b\":2}", "nulls", "truex",
        ] {
            assert!(parse(text).is_none(), "{text:?}");
            agrees(text);
        }
    }

    #[test]
    fn a_100_000_level_value_is_built_and_a_broken_one_taken_apart_without_recursion() {
        let depth = 100_000;
        let text = format!("{}7{}", "{\"k\":[".repeat(depth), "]}".repeat(depth));
        let value = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                let value = parse(&text).map(|v| {
                    let depth = super::super::depth(&v);
                    dismantle(v);
                    depth
                });
                // Cut off before the end: everything built is taken apart on this small stack.
                assert!(parse(&text[..text.len() - 3]).is_none());
                value
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(value, Some(2 * depth), "a scalar adds no level");
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            "[ -~é\\n\\t\"\\\\]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-c]{0,2}", inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn agrees_with_serde_json_on_any_value_and_its_broken_prefixes(value in arb_json(), cut in any::<prop::sample::Index>()) {
            let compact = value.to_string();
            let pretty = serde_json::to_string_pretty(&value).unwrap_or_default();
            agrees(&compact);
            agrees(&pretty);
            let mut at = cut.index(compact.len() + 1);
            while !compact.is_char_boundary(at) {
                at -= 1;
            }
            agrees(&compact[..at]);
        }
    }
}
