//! The Python flavor of the SDK section: schema → Python type expression, one named `TypedDict` per
//! object shape (arguments, outputs, nested objects), the `Tools` protocol, the `typing` import line
//! and the usage text.
//!
//! Degradations: a schema outside the enforced subset is `Any`; an object with a field name that is
//! not a plain attribute (not an identifier on the engine's tables, not NFKC-stable, a hard keyword,
//! `__debug__`, or a name-mangled `__x`) is `dict[str, Any]`, as is an open object without
//! properties and every object in the context-free [`json_schema_to_py`]; a `list[…]` chain deeper
//! than 180 brackets degrades to `Any` so the block stays parseable. Walked with an explicit stack.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::subset::{self, Keywords, Required};
use super::{SdkToolSchema, js, names, sort_by_name};

/// The fixed usage contract above the declarations.
const INSTRUCTIONS: &str = "## Writing code for run_code

`run_code` takes two required arguments: `code` — the body of an async Python function (top-level `await` and `return` both work) — and `description`, a short summary of what the program does. At run time exactly two of the names declared below are bound: `tools` and `ToolCallError`. Everything else is a STATIC STUB describing argument and return types — in particular the `TypedDict` classes do NOT exist at run time, so build arguments as plain `dict`/`list` JSON values: `await tools.name({\"field\": 1})`, never `FooArgs(field=1)`, which raises `NameError`. Inside the program:

- Call tools as `await tools.name(args)` — subscript access for exotic, reserved, or underscore-leading names: `await tools[\"my-tool\"](args)`. Every call resolves to the tool's typed canonical JSON value (each method's return type below). Tool arguments must be lossless JSON.
- A FAILED tool call raises `ToolCallError`, whose `toolName` identifies the failed tool and whose message is human-readable — wrap in `try/except` to handle and continue.
- Independent read-only calls MAY overlap under `asyncio.gather` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.
- Emit the run's answer with `print(...)` and/or a top-level `return <value>`; the returned value must be lossless JSON. Only what you print and return is program output. A successful tool result containing an image is attached after the run so you can inspect it on the next step; every other intermediate result stays out of the conversation, so extract just what you need.

The available tools:";

/// Deepest `list[` chain in one annotation (CPython refuses more than 200 open brackets per line).
const MAX_LIST_NESTING: usize = 180;

/// Python type expression for one schema, without a naming context: every object is
/// `dict[str, Any]`; anything outside the enforced subset is `Any`.
pub fn json_schema_to_py(schema: &Value) -> String {
    let mut state = State::default();
    render_type(Some(schema), "", &mut state)
}

/// The complete Python SDK section for a tool set, tools in UTF-16 name order.
pub fn render_tools_sdk_py(schemas: &[SdkToolSchema]) -> String {
    let sorted = sort_by_name(schemas);
    let mut state = State { protocol: true, ..State::default() };
    let mut members = String::with_capacity(schemas.len() * 128);
    let mut statements = 0usize;
    for tool in &sorted {
        let base = names::camel_case(&tool.name);
        let arg_type = render_type(Some(&tool.parameters), &format!("{base}Args"), &mut state);
        let output_type = render_type(tool.output.as_ref(), &format!("{base}Output"), &mut state);
        let description = tool.description.as_deref().and_then(describe);
        members.push('\n');
        if names::is_attribute_name(&tool.name) {
            statements += 1;
            members.push_str("    async def ");
            members.push_str(&tool.name);
            members.push_str("(self, args: ");
            members.push_str(&arg_type);
            members.push_str(") -> ");
            members.push_str(&output_type);
            match description {
                Some(description) => {
                    members.push_str(":\n        \"\"\"");
                    members.push_str(&description.replace('\\', "\\\\").replace('"', "\\\""));
                    members.push_str("\"\"\"");
                }
                None => members.push_str(": ..."),
            }
        } else {
            members.push_str("    # tools[");
            js::push_json_string(&mut members, &tool.name);
            members.push_str("](args: ");
            members.push_str(&arg_type);
            members.push_str(") -> ");
            members.push_str(&output_type);
            if let Some(description) = description {
                members.push_str("\n    #   ");
                members.push_str(&description);
            }
        }
    }
    let mut out = String::with_capacity(INSTRUCTIONS.len() + state.classes.len() + members.len() + 256);
    out.push_str(INSTRUCTIONS);
    out.push_str("\n\n```python\nfrom typing import ");
    let imports = [
        (state.any, "Any"),
        (state.literal, "Literal"),
        (state.not_required, "NotRequired"),
        (state.protocol, "Protocol"),
        (state.typed_dict, "TypedDict"),
    ];
    let mut first = true;
    for (used, symbol) in imports {
        if used {
            if !first {
                out.push_str(", ");
            }
            first = false;
            out.push_str(symbol);
        }
    }
    out.push_str("\n\nclass ToolCallError(Exception):\n    toolName: str\n\n");
    if !state.classes.is_empty() {
        out.push_str(&state.classes);
        out.push_str("\n\n");
    }
    out.push_str("class Tools(Protocol):");
    if statements == 0 {
        out.push_str("\n    pass");
    }
    out.push_str(&members);
    out.push_str("\n\ntools: Tools\n```");
    out
}

/// What one render accumulates: declared classes (in declaration order, joined by blank lines), the
/// class names taken, per-base collision counters, and the `typing` symbols used.
#[derive(Default)]
struct State {
    classes: String,
    used: HashSet<String>,
    next_suffix: HashMap<String, u64>,
    any: bool,
    literal: bool,
    not_required: bool,
    protocol: bool,
    typed_dict: bool,
}

impl State {
    /// Reserve a unique class name: the capped base, or the base with the next free numeric suffix.
    fn allocate(&mut self, base: &str) -> String {
        let capped = names::cap_class_name(base);
        let name = if self.used.contains(capped) {
            let mut n = self.next_suffix.get(capped).copied().unwrap_or(2);
            let mut candidate = format!("{capped}{n}");
            while self.used.contains(&candidate) {
                n += 1;
                candidate = format!("{capped}{n}");
            }
            self.next_suffix.insert(capped.to_owned(), n + 1);
            candidate
        } else {
            capped.to_owned()
        };
        self.used.insert(name.clone());
        name
    }

    fn push_class(&mut self, class: &str) {
        if !self.classes.is_empty() {
            self.classes.push_str("\n\n");
        }
        self.classes.push_str(class);
    }
}

/// A schema `description` collapsed to one line with controls escaped; `None` when nothing is left.
fn describe(description: &str) -> Option<String> {
    let mut collapsed = String::with_capacity(description.len());
    js::push_collapsed(&mut collapsed, description);
    if collapsed.bytes().any(|b| b < 0x20 || b == 0x7F) || collapsed.contains(|c| ('\u{80}'..='\u{9F}').contains(&c)) {
        let mut escaped = String::with_capacity(collapsed.len() + 8);
        for c in collapsed.chars() {
            let cp = c as u32;
            if cp <= 0x08 || (0x0E..=0x1F).contains(&cp) || (0x7F..=0x9F).contains(&cp) {
                escaped.push_str(&format!("\\x{cp:02x}"));
            } else {
                escaped.push(c);
            }
        }
        collapsed = escaped;
    }
    (!collapsed.is_empty()).then_some(collapsed)
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
    Node { node: &'a Value, class_name: ClassName<'a>, list_depth: usize },
    Text(&'static str),
    /// Start one `TypedDict` field line in the innermost open class.
    Field { name: &'a str, prop: &'a Value, required: bool },
    /// Close the innermost open class: its openness comment, `pass` if empty, then declare it.
    CloseClass { name: String, open: bool, empty: bool },
}

/// A class-name base, derived only when a node needs it: most fields are scalars and never do.
#[derive(Clone)]
enum ClassName<'a> {
    Ready(String),
    /// The base of field `field` of the class allocated as `parent`.
    Field { parent: std::rc::Rc<str>, field: &'a str },
}

impl ClassName<'_> {
    fn resolve(self) -> String {
        match self {
            ClassName::Ready(name) => name,
            ClassName::Field { parent, field } => names::child_class_name(&parent, &names::camel_case(field)),
        }
    }
}

/// Render `schema` (absent = not a schema) as a type expression; `class_name` names its object
/// shape, and the empty name marks the context-free entry point.
fn render_type(schema: Option<&Value>, class_name: &str, state: &mut State) -> String {
    let Some((schema, analysis)) = schema.and_then(|s| Some((s, subset::analyze(s)?))) else {
        state.any = true;
        return "Any".to_owned();
    };
    let mut next_id = 0usize;
    let context_free = class_name.is_empty();
    // sinks[0] receives the expression; each open class body is a further sink.
    let mut sinks: Vec<String> = vec![String::new()];
    let mut tasks: Vec<Task<'_>> = vec![Task::Node { node: schema, class_name: ClassName::Ready(class_name.to_owned()), list_depth: 0 }];
    while let Some(task) = tasks.pop() {
        let Some(sink) = sinks.last_mut() else { break };
        match task {
            Task::Text(text) => sink.push_str(text),
            Task::Field { name, prop, required } => {
                if let Some(description) = prop.get("description").and_then(Value::as_str).and_then(describe) {
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
                if let Some(class) = sinks.pop() {
                    state.push_class(&class);
                }
                if let Some(parent) = sinks.last_mut() {
                    parent.push_str(&name);
                }
            }
            Task::Node { node, class_name, list_depth } => {
                let id = next_id;
                next_id += 1;
                // A degraded node's subtree is never visited: step over its ids.
                let subtree = analysis.sizes.get(id).copied().unwrap_or(1);
                if !node.is_object() {
                    state.any = true;
                    sink.push_str("Any");
                    continue;
                }
                let k = analysis.keys.get(id).copied().unwrap_or_default();
                if let Some(Value::Array(branches)) = k.one_of {
                    let class_name = class_name.resolve();
                    for (index, branch) in branches.iter().enumerate().rev() {
                        let branch_name = names::child_class_name(&class_name, &(index + 1).to_string());
                        tasks.push(Task::Node { node: branch, class_name: ClassName::Ready(branch_name), list_depth });
                        if index > 0 {
                            tasks.push(Task::Text(" | "));
                        }
                    }
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
                        Some(_) if list_depth >= MAX_LIST_NESTING => {
                            state.any = true;
                            sink.push_str("Any");
                            next_id += subtree - 1;
                        }
                        Some(items) => {
                            sink.push_str("list[");
                            tasks.push(Task::Text("]"));
                            tasks.push(Task::Node { node: items, class_name, list_depth: list_depth + 1 });
                        }
                    },
                    "object" => {
                        let entries = match k.properties {
                            Some(Value::Object(properties)) => js::entries(properties),
                            _ => Vec::new(),
                        };
                        let open = k.open();
                        if context_free
                            || !entries.iter().all(|(name, _)| names::is_field_name(name))
                            || (entries.is_empty() && open)
                        {
                            state.any = true;
                            sink.push_str("dict[str, Any]");
                            next_id += subtree - 1;
                            continue;
                        }
                        let allocated = state.allocate(&class_name.resolve());
                        state.typed_dict = true;
                        let required = Required::of(&k);
                        let mut body = String::with_capacity(64 + entries.len() * 32);
                        body.push_str("class ");
                        body.push_str(&allocated);
                        body.push_str("(TypedDict):");
                        sinks.push(body);
                        let empty = entries.is_empty();
                        let parent: std::rc::Rc<str> = std::rc::Rc::from(allocated.as_str());
                        tasks.push(Task::CloseClass { name: allocated, open, empty });
                        for (name, prop) in entries.into_iter().rev() {
                            let field_class = ClassName::Field { parent: parent.clone(), field: name };
                            let is_required = required.contains(name);
                            if !is_required {
                                tasks.push(Task::Text("]"));
                            }
                            tasks.push(Task::Node { node: prop, class_name: field_class, list_depth: 1 });
                            tasks.push(Task::Field { name, prop, required: is_required });
                        }
                    }
                    _ => {
                        state.any = true;
                        sink.push_str("Any");
                    }
                }
            }
        }
    }
    sinks.into_iter().next().unwrap_or_default()
}
