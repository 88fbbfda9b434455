//! The Python flavor of the SDK section: schema → Python type expression, one named `TypedDict` per
//! object shape (arguments, outputs, nested objects), the `Tools` protocol, the `typing` import line
//! and the usage text.
//!
//! Degradations: a schema outside the enforced subset is `Any`; an object with a field name that is
//! not a plain attribute (not an identifier on the engine's tables, not NFKC-stable, a hard keyword,
//! `__debug__`, or a name-mangled `__x`) is `dict[str, Any]`, as is an open object without
//! properties and every object in the context-free [`json_schema_to_py`]; a `list[…]` chain deeper
//! than 180 brackets degrades to `Any` so the block stays parseable. Walked with an explicit stack.
//!
//! Spec: SDK-003, SDK-004, SDK-005, SDK-007, SDK-009, SDK-011, SDK-014, SDK-016, SDK-017, SDK-018, SDK-019,
//! SDK-020, SDK-021, SDK-022, SDK-023, SDK-025, SDK-026.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

use serde_json::Value;

use super::subset::{Analysis, Keywords, Required};
use super::usage::{self, SdkUsage};
use super::{SdkToolSchema, SdkToolView, js, names};


/// Deepest `list[` chain in one annotation (CPython refuses more than 200 open brackets per line).
const MAX_LIST_NESTING: usize = 180;

/// Python type expression for one schema, without a naming context: every object is
/// `dict[str, Any]`; anything outside the enforced subset is `Any`.
pub fn json_schema_to_py(schema: &Value) -> String {
    let mut state = State::default();
    let mut scratch = Scratch::default();
    let mut out = String::new();
    render_type(&mut out, Some(schema), String::new(), &mut state, &mut scratch);
    out
}

/// The complete Python SDK section for a tool set, tools in UTF-16 name order (upstream's, for `run_code`).
pub fn render_tools_sdk_py(schemas: &[SdkToolSchema]) -> String {
    render_tools_sdk_py_with(&SdkUsage::RUN_CODE, schemas)
}

/// [`render_tools_sdk_py`] for the transport `usage` describes.
///
/// The class declarations are written straight into the section after its head; the `typing` line,
/// known only once everything is rendered, is inserted at the end.
pub fn render_tools_sdk_py_with(usage: &SdkUsage<'_>, schemas: &[SdkToolSchema]) -> String {
    let views: Vec<SdkToolView<'_>> = schemas.iter().map(SdkToolView::of).collect();
    render_tools_sdk_py_views(usage, &views)
}

/// [`render_tools_sdk_py_with`] over borrowed schemas: the prompt renders the registry's own, copying none
/// (issue 39: at 10,000 tools the copies cost more than the render).
pub(crate) fn render_tools_sdk_py_views(usage: &SdkUsage<'_>, schemas: &[SdkToolView<'_>]) -> String {
    let mut sorted: Vec<&SdkToolView<'_>> = schemas.iter().collect();
    sorted.sort_by(|a, b| js::cmp_utf16(a.name, b.name)); // stable: equal names keep their input order
    let mut head = String::with_capacity(2048 + schemas.len() * 640);
    usage::push_python(&mut head, usage);
    head.push_str("\n\n```python\nfrom typing import ");
    let imports_at = head.len();
    head.push_str("\n\nclass ToolCallError(Exception):\n    toolName: str\n\n");
    let mut state = State { protocol: true, classes: head, ..State::default() };
    state.used.reserve(schemas.len() * 2);
    let mut scratch = Scratch::default();
    let mut members = String::with_capacity(schemas.len() * 128);
    let mut statements = 0usize;
    for tool in &sorted {
        let base = names::camel_case(tool.name);
        let attribute = names::is_attribute_name(tool.name);
        members.push('\n');
        if attribute {
            statements += 1;
            members.push_str("    async def ");
            members.push_str(tool.name);
            members.push_str("(self, args: ");
        } else {
            members.push_str("    # tools[");
            js::push_json_string(&mut members, tool.name);
            members.push_str("](args: ");
        }
        // Argument classes are allocated before output classes, as the annotations read.
        render_type(&mut members, Some(tool.parameters), format!("{base}Args"), &mut state, &mut scratch);
        members.push_str(") -> ");
        render_type(&mut members, tool.output, format!("{base}Output"), &mut state, &mut scratch);
        let description = tool.description.and_then(describe);
        if attribute {
            match description {
                Some(description) => {
                    members.push_str(":\n        \"\"\"");
                    for c in description.chars() {
                        match c {
                            '\\' => members.push_str("\\\\"),
                            '"' => members.push_str("\\\""),
                            _ => members.push(c),
                        }
                    }
                    members.push_str("\"\"\"");
                }
                None => members.push_str(": ..."),
            }
        } else if let Some(description) = description {
            members.push_str("\n    #   ");
            members.push_str(&description);
        }
    }
    let mut imports = String::with_capacity(64);
    let symbols = [
        (state.any, "Any"),
        (state.literal, "Literal"),
        (state.not_required, "NotRequired"),
        (state.protocol, "Protocol"),
        (state.typed_dict, "TypedDict"),
    ];
    for (used, symbol) in symbols {
        if used {
            if !imports.is_empty() {
                imports.push_str(", ");
            }
            imports.push_str(symbol);
        }
    }
    let declared = state.declared > 0;
    let mut out = state.classes;
    if declared {
        out.push_str("\n\n");
    }
    out.push_str("class Tools(Protocol):");
    if statements == 0 {
        out.push_str("\n    pass");
    }
    out.push_str(&members);
    out.push_str("\n\ntools: Tools\n```");
    out.insert_str(imports_at, &imports);
    out
}

/// What one render accumulates: declared classes (in declaration order, joined by blank lines, after
/// whatever text `classes` started with), the class names taken, per-base collision counters, and the
/// `typing` symbols used.
#[derive(Default)]
struct State {
    classes: String,
    declared: usize,
    used: HashSet<Rc<str>>,
    next_suffix: HashMap<Rc<str>, u64>,
    any: bool,
    literal: bool,
    not_required: bool,
    protocol: bool,
    typed_dict: bool,
}

impl State {
    /// Reserve a unique class name: the capped base, or the base with the next free numeric suffix.
    fn allocate(&mut self, base: &str) -> Rc<str> {
        let capped = names::cap_class_name(base);
        let name: Rc<str> = Rc::from(capped);
        if self.used.insert(name.clone()) {
            return name;
        }
        let mut n = self.next_suffix.get(capped).copied().unwrap_or(2);
        let mut candidate = format!("{capped}{n}");
        while self.used.contains(candidate.as_str()) {
            n += 1;
            candidate = format!("{capped}{n}");
        }
        self.next_suffix.insert(name, n + 1);
        let name: Rc<str> = Rc::from(candidate);
        self.used.insert(name.clone());
        name
    }

    fn push_class(&mut self, class: &str) {
        if self.declared > 0 {
            self.classes.push_str("\n\n");
        }
        self.declared += 1;
        self.classes.push_str(class);
    }
}

/// A schema `description` collapsed to one line with controls escaped; `None` when nothing is left.
/// Borrowed when there is nothing to change (printable ASCII with single inner spaces).
fn describe(description: &str) -> Option<Cow<'_, str>> {
    let bytes = description.as_bytes();
    let plain = bytes.first().is_some_and(|&b| b != b' ')
        && bytes.last().is_some_and(|&b| b != b' ')
        && bytes.iter().all(|&b| (0x20..0x7F).contains(&b))
        && !bytes.windows(2).any(|pair| pair == b"  ");
    if plain {
        return Some(Cow::Borrowed(description));
    }
    let mut collapsed = String::with_capacity(description.len());
    js::push_collapsed(&mut collapsed, description);
    if collapsed.bytes().any(|b| b < 0x20 || b == 0x7F) || collapsed.contains(|c| ('\u{80}'..='\u{9F}').contains(&c)) {
        let mut escaped = String::with_capacity(collapsed.len() + 8);
        for c in collapsed.chars() {
            let cp = c as u32;
            if cp <= 0x08 || (0x0E..=0x1F).contains(&cp) || (0x7F..=0x9F).contains(&cp) {
                let _ = write!(escaped, "\\x{cp:02x}");
            } else {
                escaped.push(c);
            }
        }
        collapsed = escaped;
    }
    (!collapsed.is_empty()).then_some(Cow::Owned(collapsed))
}

/// A Python literal for a validated scalar.
fn push_literal_value(out: &mut String, value: &Value) {
    match value {
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::String(s) => js::push_json_string(out, s),
        Value::Number(n) => {
            let x = js::js_number(n);
            if js::is_integer(x) && x.abs() > 9_007_199_254_740_991.0 {
                js::push_exact_integer(out, x);
            } else {
                js::push_js_number(out, x);
            }
        }
        Value::Null => out.push_str("null"),
        Value::Array(_) | Value::Object(_) => out.push_str("Any"),
    }
}

fn push_scalar(out: &mut String, k: &Keywords<'_>, broad: &str, state: &mut State) {
    if let Some(value) = k.constant {
        state.literal = true;
        out.push_str("Literal[");
        push_literal_value(out, value);
        out.push(']');
    } else if let Some(Value::Array(values)) = k.enumeration {
        state.literal = true;
        out.push_str("Literal[");
        for (index, value) in values.iter().enumerate() {
            if index > 0 {
                out.push_str(", ");
            }
            push_literal_value(out, value);
        }
        out.push(']');
    } else {
        out.push_str(broad);
    }
}

enum Task<'a> {
    /// Render node `id` of the current analysis.
    Node { id: usize, class_name: ClassName<'a>, list_depth: usize },
    Text(&'static str),
    /// Start one `TypedDict` field line in the innermost open class; `id` is the field's schema node.
    Field { name: &'a str, id: usize, required: bool },
    /// Close the innermost open class: its openness comment, `pass` if empty, then declare it.
    CloseClass { name: Rc<str>, open: bool, empty: bool },
}

/// A class-name base, derived only when a node needs it: most fields are scalars and never do.
enum ClassName<'a> {
    Ready(String),
    /// The base of field `field` of the class allocated as `parent`.
    Field { parent: Rc<str>, field: &'a str },
    /// The base of `oneOf` branch `index` (1-based) of a union named `parent`.
    Branch { parent: Rc<str>, index: usize },
}

impl ClassName<'_> {
    fn resolve(self) -> String {
        match self {
            ClassName::Ready(name) => name,
            ClassName::Field { parent, field } => names::child_class_name(&parent, &names::camel_case(field)),
            ClassName::Branch { parent, index } => names::child_class_name(&parent, &index.to_string()),
        }
    }
}

/// Buffers reused by every `render_type` of one render: the analysis, the task stack, the open class
/// bodies and spare strings for them.
#[derive(Default)]
struct Scratch<'a> {
    analysis: Analysis<'a>,
    tasks: Vec<Task<'a>>,
    bodies: Vec<String>,
    spare: Vec<String>,
}

/// Append the type expression of `schema` (absent = not a schema) to `out`; `class_name` names its
/// object shape, and the empty name marks the context-free entry point.
fn render_type<'a>(out: &mut String, schema: Option<&'a Value>, class_name: String, state: &mut State, scratch: &mut Scratch<'a>) {
    let Scratch { analysis, tasks, bodies, spare } = scratch;
    if !schema.is_some_and(|schema| analysis.analyze(schema, false)) {
        state.any = true;
        out.push_str("Any");
        return;
    }
    let context_free = class_name.is_empty();
    tasks.clear();
    bodies.clear();
    tasks.push(Task::Node { id: 0, class_name: ClassName::Ready(class_name), list_depth: 0 });
    while let Some(task) = tasks.pop() {
        // The innermost open class body, else the expression itself.
        let sink: &mut String = match bodies.last_mut() {
            Some(body) => body,
            None => &mut *out,
        };
        match task {
            Task::Text(text) => sink.push_str(text),
            Task::Field { name, id, required } => {
                if let Some(description) = analysis.keys[id].description.and_then(Value::as_str).and_then(describe) {
                    sink.push_str("\n    # ");
                    sink.push_str(&description);
                }
                sink.push_str("\n    ");
                sink.push_str(name);
                if required {
                    sink.push_str(": ");
                } else {
                    state.not_required = true;
                    sink.push_str(": NotRequired[");
                }
            }
            Task::CloseClass { name, open, empty } => {
                if open {
                    sink.push_str("\n    # Additional keys beyond those declared are allowed.");
                } else if empty {
                    sink.push_str("\n    pass");
                }
                if let Some(mut class) = bodies.pop() {
                    state.push_class(&class);
                    class.clear();
                    spare.push(class);
                }
                let parent: &mut String = match bodies.last_mut() {
                    Some(body) => body,
                    None => &mut *out,
                };
                parent.push_str(&name);
            }
            Task::Node { id, class_name, list_depth } => {
                let k = analysis.keys[id];
                if let Some(Value::Array(branches)) = k.one_of {
                    let parent: Rc<str> = Rc::from(class_name.resolve());
                    let first = tasks.len();
                    for (index, child) in analysis.child_ids(id, branches.len()).enumerate() {
                        if index > 0 {
                            tasks.push(Task::Text(" | "));
                        }
                        let class_name = ClassName::Branch { parent: parent.clone(), index: index + 1 };
                        tasks.push(Task::Node { id: child, class_name, list_depth });
                    }
                    tasks[first..].reverse();
                    continue;
                }
                let Some(ty) = k.ty.and_then(Value::as_str) else {
                    state.any = true;
                    sink.push_str("Any");
                    continue;
                };
                match ty {
                    "string" => push_scalar(sink, &k, "str", state),
                    "number" => push_scalar(sink, &k, "float", state),
                    "integer" => push_scalar(sink, &k, "int", state),
                    "boolean" => push_scalar(sink, &k, "bool", state),
                    "null" => sink.push_str("None"),
                    "array" => match k.items {
                        None => {
                            state.any = true;
                            sink.push_str("list[Any]");
                        }
                        // Past the cap the chain degrades; its subtree is never visited.
                        Some(_) if list_depth >= MAX_LIST_NESTING => {
                            state.any = true;
                            sink.push_str("Any");
                        }
                        Some(_) => {
                            sink.push_str("list[");
                            tasks.push(Task::Text("]"));
                            tasks.push(Task::Node { id: id + 1, class_name, list_depth: list_depth + 1 });
                        }
                    },
                    "object" => {
                        let (start, end) = analysis.prop_ranges[id];
                        let entries = &analysis.props[start..end];
                        let open = k.open();
                        if context_free
                            || !entries.iter().all(|(name, _)| names::is_field_name(name))
                            || (entries.is_empty() && open)
                        {
                            state.any = true;
                            sink.push_str("dict[str, Any]");
                            continue;
                        }
                        let allocated = state.allocate(&class_name.resolve());
                        state.typed_dict = true;
                        let required = Required::of(&k);
                        let mut body = spare.pop().unwrap_or_default();
                        body.push_str("class ");
                        body.push_str(&allocated);
                        body.push_str("(TypedDict):");
                        bodies.push(body);
                        tasks.push(Task::CloseClass { name: allocated.clone(), open, empty: entries.is_empty() });
                        let first = tasks.len();
                        for (&(name, _), child) in entries.iter().zip(analysis.child_ids(id, end - start)) {
                            let is_required = required.contains(name);
                            tasks.push(Task::Field { name, id: child, required: is_required });
                            let class_name = ClassName::Field { parent: allocated.clone(), field: name };
                            tasks.push(Task::Node { id: child, class_name, list_depth: 1 });
                            if !is_required {
                                tasks.push(Task::Text("]"));
                            }
                        }
                        tasks[first..].reverse();
                    }
                    _ => {
                        state.any = true;
                        sink.push_str("Any");
                    }
                }
            }
        }
    }
}
