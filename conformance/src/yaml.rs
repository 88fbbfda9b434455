//! The only module that reads YAML: turns one YAML document into a `serde_json::Value` plus a
//! [`Positions`] index (JSON pointer → line and column of the node and of its mapping key), so every
//! loader error can name the exact line of a nested field or list item.
//!
//! Built on `saphyr-parser`'s event stream (maintained, marks every event). The tree is built with an
//! explicit stack, never recursion. Scalars resolve by the YAML 1.2 core schema (`no` is a string,
//! `.inf` is refused because JSON has no non-finite numbers). Anchors and aliases work; merge keys
//! (`<<`) and tags other than the core ones do not.
//!
//! # Limits
//! A document nests at most [`MAX_DEPTH`] collections, counted through aliases (an alias of an anchored
//! value `h` levels high, used at depth `d`, nests `d + h`), and holds at most `MAX_NODES` nodes after
//! alias expansion ("billion laughs"). `saphyr-parser` itself refuses flow collections nested more than
//! 255 deep ("recursion limit exceeded"); `MAX_DEPTH` is below that, and the parser's message is
//! reported as the same "nesting deeper than MAX_DEPTH levels" error, so there is one limit.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};
use serde_json::{Map, Number, Value};

/// Deepest nesting accepted in a file, through aliases too: deeper values would make later recursive
/// passes (schema validation, deserialization, drop) risk the stack. Below `saphyr-parser`'s own flow
/// limit of 255, so one number holds for block and flow style alike.
pub const MAX_DEPTH: usize = 250;
/// Positions are recorded down to this depth; deeper nodes report their nearest recorded ancestor.
const POSITION_DEPTH: usize = 64;
/// Cap on nodes after alias expansion (guards against "billion laughs").
const MAX_NODES: usize = 1_000_000;

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1, in characters.
    pub column: usize,
}

impl Pos {
    fn of(span: &Span) -> Pos {
        Pos { line: span.start.line(), column: span.start.col() + 1 }
    }
}

/// Where one node is: its value and, for a mapping entry, its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodePos {
    /// The key of the mapping entry holding the node, if any.
    pub key: Option<Pos>,
    /// The start of the node itself.
    pub value: Pos,
}

/// JSON pointer (RFC 6901) → position.
#[derive(Debug, Clone, Default)]
pub struct Positions {
    nodes: HashMap<String, NodePos>,
}

impl Positions {
    /// The position of the node at `pointer`, or of its nearest recorded ancestor.
    pub fn node(&self, pointer: &str) -> NodePos {
        let mut p = pointer;
        loop {
            if let Some(n) = self.nodes.get(p) {
                return *n;
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return NodePos { key: None, value: Pos { line: 1, column: 1 } },
            }
        }
    }

    /// Where to point for a problem with the node at `pointer`: its key when it is a mapping entry
    /// (the line that names the field), else the node itself.
    pub fn field(&self, pointer: &str) -> Pos {
        let n = self.node(pointer);
        n.key.unwrap_or(n.value)
    }
}

/// Appends one segment to a JSON pointer, escaping `~` and `/`.
pub fn push_pointer(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// One parsed document.
#[derive(Debug)]
pub struct Document {
    /// The value.
    pub value: Value,
    /// Where each node is.
    pub positions: Positions,
}

/// A YAML problem at a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// Where.
    pub pos: Pos,
    /// What.
    pub message: String,
}

enum Frame {
    Seq { items: Vec<Value>, start: Pos, pointer: Option<String>, anchor: usize, height: usize },
    Map { map: Map<String, Value>, start: Pos, pointer: Option<String>, anchor: usize, key: Option<(String, Pos)>, height: usize },
}

struct Builder {
    stack: Vec<Frame>,
    root: Option<(Value, Pos)>,
    positions: Positions,
    /// Anchored values with their height (collections nested in them, 0 for a scalar).
    anchors: HashMap<usize, (Value, usize)>,
    nodes: usize,
}

fn too_deep(pos: Pos) -> YamlError {
    YamlError { pos, message: format!("nesting deeper than {MAX_DEPTH} levels (the limit of a spec file, aliases included)") }
}

impl Builder {
    /// The pointer a node starting now would get, when positions are still recorded at this depth.
    fn child_pointer(&self) -> Option<String> {
        match self.stack.last() {
            None => Some(String::new()),
            Some(_) if self.stack.len() >= POSITION_DEPTH => None,
            Some(Frame::Seq { items, pointer, .. }) => pointer.as_ref().map(|p| {
                let mut p = p.clone();
                push_pointer(&mut p, &items.len().to_string());
                p
            }),
            Some(Frame::Map { key, pointer, .. }) => match (pointer, key) {
                (Some(p), Some((k, _))) => {
                    let mut p = p.clone();
                    push_pointer(&mut p, k);
                    Some(p)
                }
                _ => None,
            },
        }
    }

    fn expecting_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Map { key: None, .. }))
    }

    fn count(&mut self, n: usize, pos: Pos) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(YamlError { pos, message: format!("more than {MAX_NODES} nodes (after aliases)") });
        }
        Ok(())
    }

    /// Attaches a finished node `height` collections high to its parent (or makes it the root).
    fn attach(&mut self, value: Value, pos: Pos, pointer: Option<String>, height: usize) -> Result<(), YamlError> {
        if let Some(Frame::Seq { height: h, .. } | Frame::Map { height: h, .. }) = self.stack.last_mut() {
            *h = (*h).max(height + 1);
        }
        match self.stack.last_mut() {
            None => {
                if let Some(p) = pointer {
                    self.positions.nodes.insert(p, NodePos { key: None, value: pos });
                }
                self.root = Some((value, pos));
            }
            Some(Frame::Seq { items, .. }) => {
                if let Some(p) = pointer {
                    self.positions.nodes.insert(p, NodePos { key: None, value: pos });
                }
                items.push(value);
            }
            Some(Frame::Map { map, key, .. }) => match key.take() {
                None => {
                    let k = match value {
                        Value::String(s) => s,
                        Value::Number(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                        Value::Null => "null".to_string(),
                        _ => {
                            return Err(YamlError { pos, message: "a mapping key must be a scalar".into() });
                        }
                    };
                    if map.contains_key(&k) {
                        return Err(YamlError { pos, message: format!("duplicate key {k:?}") });
                    }
                    *key = Some((k, pos));
                }
                Some((k, kpos)) => {
                    if let Some(p) = pointer {
                        self.positions.nodes.insert(p, NodePos { key: Some(kpos), value: pos });
                    }
                    map.insert(k, value);
                }
            },
        }
        Ok(())
    }

    fn open(&mut self, seq: bool, anchor: usize, pos: Pos) -> Result<(), YamlError> {
        if self.expecting_key() {
            return Err(YamlError { pos, message: "a mapping key must be a scalar".into() });
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(too_deep(pos));
        }
        self.count(1, pos)?;
        let pointer = self.child_pointer();
        self.stack.push(if seq {
            Frame::Seq { items: Vec::new(), start: pos, pointer, anchor, height: 1 }
        } else {
            Frame::Map { map: Map::new(), start: pos, pointer, anchor, key: None, height: 1 }
        });
        Ok(())
    }

    fn close(&mut self, pos: Pos) -> Result<(), YamlError> {
        let (value, start, pointer, anchor, height) = match self.stack.pop() {
            Some(Frame::Seq { items, start, pointer, anchor, height }) => (Value::Array(items), start, pointer, anchor, height),
            Some(Frame::Map { map, start, pointer, anchor, key, height }) => {
                if key.is_some() {
                    return Err(YamlError { pos, message: "a mapping key without a value".into() });
                }
                (Value::Object(map), start, pointer, anchor, height)
            }
            None => return Err(YamlError { pos, message: "unbalanced collection end".into() }),
        };
        if anchor != 0 {
            self.anchors.insert(anchor, (value.clone(), height));
        }
        self.attach(value, start, pointer, height)
    }

    /// A scalar, or an alias's value `height` collections high.
    fn leaf(&mut self, value: Value, anchor: usize, pos: Pos, height: usize) -> Result<(), YamlError> {
        if self.stack.len() + height > MAX_DEPTH {
            return Err(too_deep(pos));
        }
        self.count(1, pos)?;
        if anchor != 0 {
            self.anchors.insert(anchor, (value.clone(), height));
        }
        let pointer = if self.expecting_key() { None } else { self.child_pointer() };
        self.attach(value, pos, pointer, height)
    }
}

/// Parses exactly one YAML document.
pub fn parse(text: &str) -> Result<Document, YamlError> {
    let mut parser = Parser::new_from_str(text);
    let mut b = Builder { stack: Vec::new(), root: None, positions: Positions::default(), anchors: HashMap::new(), nodes: 0 };
    let mut documents = 0usize;
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|e| {
            let pos = Pos { line: e.marker().line(), column: e.marker().col() + 1 };
            // saphyr-parser's own flow-nesting cap (255) is past MAX_DEPTH: the same limit, one message.
            if e.info() == "recursion limit exceeded" { too_deep(pos) } else { YamlError { pos, message: e.info().to_string() } }
        })?;
        let pos = Pos::of(&span);
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlError { pos, message: "a file holds exactly one YAML document".into() });
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let value = resolve(&text, style, tag.as_deref()).map_err(|message| YamlError { pos, message })?;
                b.leaf(value, anchor, pos, 0)?;
            }
            Event::Alias(id) => {
                let (value, height) = match b.anchors.get(&id) {
                    Some((value, height)) if b.stack.len() + height <= MAX_DEPTH => (value.clone(), *height),
                    Some(_) => return Err(too_deep(pos)),
                    None => return Err(YamlError { pos, message: "unknown alias".into() }),
                };
                let n = count_nodes(&value);
                b.count(n, pos)?;
                b.leaf(value, 0, pos, height)?;
            }
            Event::SequenceStart(anchor, tag) => {
                check_collection_tag(tag.as_deref(), "seq", pos)?;
                b.open(true, anchor, pos)?;
            }
            Event::MappingStart(anchor, tag) => {
                check_collection_tag(tag.as_deref(), "map", pos)?;
                b.open(false, anchor, pos)?;
            }
            Event::SequenceEnd | Event::MappingEnd => b.close(pos)?,
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
    }
    let value = b.root.map(|(v, _)| v).unwrap_or(Value::Null);
    Ok(Document { value, positions: b.positions })
}

/// Counts nodes iteratively.
fn count_nodes(value: &Value) -> usize {
    let mut n = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        n += 1;
        match v {
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(m) => stack.extend(m.values()),
            _ => {}
        }
    }
    n
}

fn core_tag(tag: Option<&Tag>) -> Result<Option<&str>, String> {
    match tag {
        None => Ok(None),
        Some(t) if t.handle == "tag:yaml.org,2002:" || t.handle == "!!" => Ok(Some(t.suffix.as_str())),
        Some(t) if t.handle == "!" && t.suffix.is_empty() => Ok(None),
        Some(t) => Err(format!("unsupported tag {}{}", t.handle, t.suffix)),
    }
}

fn check_collection_tag(tag: Option<&Tag>, expected: &str, pos: Pos) -> Result<(), YamlError> {
    match core_tag(tag) {
        Ok(None) => Ok(()),
        Ok(Some(s)) if s == expected => Ok(()),
        Ok(Some(s)) => Err(YamlError { pos, message: format!("unsupported tag !!{s} on a collection") }),
        Err(message) => Err(YamlError { pos, message }),
    }
}

/// Resolves a scalar by the YAML 1.2 core schema.
fn resolve(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    match core_tag(tag)? {
        Some("str") => return Ok(Value::String(text.to_string())),
        Some("null") => return Ok(Value::Null),
        Some("bool") => {
            return plain_bool(text).map(Value::Bool).ok_or_else(|| format!("{text:?} is not a !!bool"));
        }
        Some("int") | Some("float") => {
            return plain_number(text)?.ok_or_else(|| format!("{text:?} is not a number"));
        }
        Some(other) => return Err(format!("unsupported tag !!{other}")),
        None => {}
    }
    if !matches!(style, ScalarStyle::Plain) {
        return Ok(Value::String(text.to_string()));
    }
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Value::Null);
    }
    if let Some(b) = plain_bool(text) {
        return Ok(Value::Bool(b));
    }
    Ok(plain_number(text)?.unwrap_or_else(|| Value::String(text.to_string())))
}

fn plain_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// A core-schema number, `Ok(None)` when the text is not one.
fn plain_number(text: &str) -> Result<Option<Value>, String> {
    let digits = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if let Some(hex) = text.strip_prefix("0x") {
        if digits(hex, 16) {
            return Ok(u64::from_str_radix(hex, 16).ok().map(|n| Value::Number(n.into())));
        }
        return Ok(None);
    }
    if let Some(oct) = text.strip_prefix("0o") {
        if digits(oct, 8) {
            return Ok(u64::from_str_radix(oct, 8).ok().map(|n| Value::Number(n.into())));
        }
        return Ok(None);
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN") {
        return Err(format!(
            "{text} is not a JSON number; write the string \"Infinity\", \"-Infinity\" or \"NaN\" where the format allows it"
        ));
    }
    if digits(unsigned, 10) {
        if let Ok(n) = text.parse::<i64>() {
            return Ok(Some(Value::Number(n.into())));
        }
        if let Ok(n) = unsigned.parse::<u64>() {
            if !text.starts_with('-') {
                return Ok(Some(Value::Number(n.into())));
            }
        }
    }
    if is_core_float(unsigned) {
        if let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
            return Ok(Some(Value::Number(n)));
        }
    }
    Ok(None)
}

/// `( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
fn is_core_float(s: &str) -> bool {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (!int.is_empty() || !frac.is_empty())
                && int.chars().all(|c| c.is_ascii_digit())
                && frac.chars().all(|c| c.is_ascii_digit())
                && (!int.is_empty() || !frac.is_empty())
        }
        None => !mantissa.is_empty() && mantissa.chars().all(|c| c.is_ascii_digit()),
    };
    let exponent_ok = match exponent {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
        }
    };
    mantissa_ok && exponent_ok && mantissa != "."
}
