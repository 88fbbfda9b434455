//! The TypeScript flavor of the SDK section: schema → TypeScript type text, and the whole
//! `tools:sdk` block (usage text, `JsonValue`, `ToolArgsMap`, `ToolOutputMap`, `ToolName`,
//! `ToolCallError`, `tools`).
//!
//! Rendering streams into one buffer with an explicit task stack. The only construct whose text
//! depends on its subtree is an array of a type containing `|` or `&`, which takes parentheses; the
//! subset check's single pass also computes that fact for every node bottom-up, so even a
//! 100,000-deep array chain renders in linear time, and the buffers are reused from tool to tool.
//!
//! Spec: SDK-001, SDK-002, SDK-007, SDK-008, SDK-010, SDK-012, SDK-013, SDK-014, SDK-015, SDK-016.

use serde_json::Value;

use super::subset::{Analysis, Keywords, Required};
use super::usage::{self, SdkUsage};
use super::{SdkToolSchema, js, sort_by_name};


const JSON_VALUE: &str = "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }";

const TAIL: &str = "type ToolName = keyof ToolOutputMap

declare class ToolCallError extends Error {
  readonly name: \"ToolCallError\";
  readonly toolName: ToolName;
}

declare const tools: {
  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;
}";

/// TypeScript type text for one schema (top-level indentation 0). Every construct of the enforced
/// subset renders; anything outside it (`$ref`, `anyOf`, type arrays, malformed nodes) is `unknown`.
pub fn json_schema_to_ts(schema: &Value) -> String {
    let mut out = String::new();
    let mut renderer = Renderer::default();
    renderer.push_type(&mut out, schema, 0);
    out
}

/// The complete TypeScript SDK section for a tool set, tools in UTF-16 name order (upstream's, for
/// `run_code`).
pub fn render_tools_sdk(schemas: &[SdkToolSchema]) -> String {
    render_tools_sdk_with(&SdkUsage::RUN_CODE, schemas)
}

/// [`render_tools_sdk`] for the transport `usage` describes.
pub fn render_tools_sdk_with(usage: &SdkUsage<'_>, schemas: &[SdkToolSchema]) -> String {
    let sorted = sort_by_name(schemas);
    let mut renderer = Renderer::default();
    let mut out = String::with_capacity(4096 + schemas.len() * 512);
    push_frame(&mut out, usage, sorted.len(), |out, i, member| {
        let tool = &sorted[i];
        match member {
            Member::Args => push_args_member(out, &mut renderer, &tool.name, tool.description.as_deref(), &tool.parameters),
            Member::Output => push_output_member(out, &mut renderer, &tool.name, tool.output.as_ref()),
        }
    });
    out
}

/// Which of a tool's two members [`push_frame`] asks for.
#[derive(Clone, Copy)]
enum Member {
    Args,
    Output,
}

/// The whole section around `count` tools' members, in their order: the usage text, `JsonValue`,
/// `ToolArgsMap` (each tool's args member from `member`), `ToolOutputMap` (each output member) and the
/// tail. One frame for both the renderer and the cached members, so their texts cannot drift apart.
fn push_frame(out: &mut String, usage: &SdkUsage<'_>, count: usize, mut member: impl FnMut(&mut String, usize, Member)) {
    usage::push_typescript(out, usage);
    out.push_str("\n\n```ts\n");
    out.push_str(JSON_VALUE);
    for (open, which) in [("\n\ninterface ToolArgsMap {", Member::Args), ("}\n\ninterface ToolOutputMap {", Member::Output)] {
        out.push_str(open);
        for i in 0..count {
            out.push('\n');
            member(out, i, which);
        }
        if count > 0 {
            out.push('\n');
        }
    }
    out.push_str("}\n\n");
    out.push_str(TAIL);
    out.push_str("\n```");
}

/// One tool's `ToolArgsMap` member (its doc line, then `  name: type;`).
fn push_args_member<'a>(out: &mut String, renderer: &mut Renderer<'a>, name: &str, description: Option<&str>, parameters: &'a Value) {
    if let Some(description) = description {
        push_doc_line(out, description, 1);
    }
    out.push_str("  ");
    push_key(out, name);
    out.push_str(": ");
    renderer.push_type(out, parameters, 1);
    out.push(';');
}

/// One tool's `ToolOutputMap` member (`  name: type;`).
fn push_output_member<'a>(out: &mut String, renderer: &mut Renderer<'a>, name: &str, output: Option<&'a Value>) {
    out.push_str("  ");
    push_key(out, name);
    out.push_str(": ");
    match output {
        Some(output) => renderer.push_type(out, output, 1),
        None => out.push_str("unknown"),
    }
    out.push(';');
}

/// One tool's two members of the TypeScript SDK, rendered alone: what [`render_tools_sdk_with`] writes
/// for it, whatever the other tools are (a cache keeps them per registered tool, so a registry change
/// renders only the tools it added).
#[derive(Debug)]
pub(crate) struct TsMembers {
    /// The tool's name (the sort key).
    pub(crate) name: String,
    args: String,
    output: String,
}

impl TsMembers {
    /// Render `tool`'s members.
    pub(crate) fn render(name: &str, description: Option<&str>, parameters: &Value, output: Option<&Value>) -> Self {
        let mut renderer = Renderer::default();
        let mut args = String::new();
        push_args_member(&mut args, &mut renderer, name, description, parameters);
        let mut out = String::new();
        push_output_member(&mut out, &mut renderer, name, output);
        Self { name: name.to_owned(), args, output: out }
    }
}

/// [`render_tools_sdk_with`] from members rendered beforehand (`tools` in the tool list's order), into
/// one buffer sized for the whole text.
pub(crate) fn assemble_tools_sdk(usage: &SdkUsage<'_>, tools: &[&TsMembers]) -> String {
    let mut sorted: Vec<&TsMembers> = tools.to_vec();
    sorted.sort_by(|a, b| js::cmp_utf16(&a.name, &b.name));
    let members: usize = sorted.iter().map(|m| m.args.len() + m.output.len() + 2).sum();
    let mut out = String::with_capacity(4096 + members);
    push_frame(&mut out, usage, sorted.len(), |out, i, member| {
        out.push_str(match member {
            Member::Args => &sorted[i].args,
            Member::Output => &sorted[i].output,
        })
    });
    out
}

fn pad(out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str("  ");
    }
}

fn is_ts_identifier(name: &str) -> bool {
    let bytes = name.as_bytes();
    match bytes.first() {
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' || *b == b'$' => {}
        _ => return false,
    }
    bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$')
}

/// An object key: bare when it is an ASCII identifier, JSON-quoted otherwise.
fn push_key(out: &mut String, name: &str) {
    if is_ts_identifier(name) {
        out.push_str(name);
    } else {
        js::push_json_string(out, name);
    }
}

/// One `/** … */` line followed by a newline (none for an empty description). The description is
/// collapsed to one line and `*/` is escaped so it cannot close the comment (it cannot span two words,
/// so each word is escaped on its own).
fn push_doc_line(out: &mut String, description: &str, indent: usize) {
    if description.is_empty() {
        return;
    }
    pad(out, indent);
    out.push_str("/** ");
    let mut first = true;
    for word in description.split(js::is_js_whitespace).filter(|w| !w.is_empty()) {
        if !first {
            out.push(' ');
        }
        first = false;
        if !word.contains('*') {
            out.push_str(word);
            continue;
        }
        let mut rest = word;
        while let Some(at) = rest.find("*/") {
            out.push_str(&rest[..at]);
            out.push_str("*\\/");
            rest = &rest[at + 2..];
        }
        out.push_str(rest);
    }
    out.push_str(" */\n");
}

fn push_scalar(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => js::push_json_string(out, s),
        Value::Number(n) => js::push_js_number(out, js::js_number(n)),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
        // Unreachable after the subset check: scalar enum/const entries only.
        Value::Array(_) | Value::Object(_) => out.push_str("unknown"),
    }
}

enum Task<'a> {
    /// Render node `id` at an indentation.
    Node(usize, usize),
    Text(&'static str),
    /// A property's doc line and key; `id` is its schema node (for the description).
    Property { name: &'a str, id: usize, required: bool, indent: usize },
    Close { indent: usize, open: bool },
}

/// One render's reusable buffers: the analysis of the current schema and the task stack.
#[derive(Default)]
struct Renderer<'a> {
    analysis: Analysis<'a>,
    tasks: Vec<Task<'a>>,
}

impl<'a> Renderer<'a> {
    /// Append the type text of `schema` rendered at `indent`. One analysis pass reads the schema (and
    /// decides every array's parentheses bottom-up); the render streams with an explicit task stack,
    /// so even a 100,000-deep array chain renders in linear time.
    fn push_type(&mut self, out: &mut String, schema: &'a Value, indent: usize) {
        if !self.analysis.analyze(schema, true) {
            out.push_str("unknown");
            return;
        }
        let analysis = &self.analysis;
        let tasks = &mut self.tasks;
        tasks.clear();
        tasks.push(Task::Node(0, indent));
        while let Some(task) = tasks.pop() {
            match task {
                Task::Text(text) => out.push_str(text),
                Task::Property { name, id, required, indent } => {
                    out.push('\n');
                    if let Some(description) = analysis.keys[id].description.and_then(Value::as_str) {
                        push_doc_line(out, description, indent);
                    }
                    pad(out, indent);
                    push_key(out, name);
                    out.push_str(if required { ": " } else { "?: " });
                }
                Task::Close { indent, open } => {
                    out.push('\n');
                    pad(out, indent);
                    out.push('}');
                    if open {
                        out.push_str(" & Record<string, JsonValue>");
                    }
                }
                Task::Node(id, indent) => {
                    let k = analysis.keys[id];
                    if let Some(Value::Array(branches)) = k.one_of {
                        let first = tasks.len();
                        for (index, child) in analysis.child_ids(id, branches.len()).enumerate() {
                            if index > 0 {
                                tasks.push(Task::Text(" | "));
                            }
                            tasks.push(Task::Node(child, indent));
                        }
                        tasks[first..].reverse();
                        continue;
                    }
                    match k.ty.and_then(Value::as_str) {
                        Some("array") if k.items.is_some() => {
                            if analysis.bars[id + 1] {
                                out.push('(');
                                tasks.push(Task::Text(")[]"));
                            } else {
                                tasks.push(Task::Text("[]"));
                            }
                            tasks.push(Task::Node(id + 1, indent));
                        }
                        Some("object") if analysis.prop_ranges[id].0 < analysis.prop_ranges[id].1 => {
                            let (start, end) = analysis.prop_ranges[id];
                            let open = k.open();
                            out.push('{');
                            tasks.push(Task::Close { indent, open });
                            let required = Required::of(&k);
                            let first = tasks.len();
                            for (&(name, _), child) in analysis.props[start..end].iter().zip(analysis.child_ids(id, end - start)) {
                                tasks.push(Task::Property { name, id: child, required: required.contains(name), indent: indent + 1 });
                                tasks.push(Task::Node(child, indent + 1));
                                tasks.push(Task::Text(";"));
                            }
                            tasks[first..].reverse();
                        }
                        _ => push_leaf(out, &k),
                    }
                }
            }
        }
    }
}

/// A childless node: annotation-only, scalar, item-less array, or property-less object.
fn push_leaf(out: &mut String, k: &Keywords<'_>) {
    let Some(ty) = k.ty.and_then(Value::as_str) else {
        out.push_str("JsonValue");
        return;
    };
    match ty {
        "array" => out.push_str("JsonValue[]"),
        "object" => out.push_str(if k.open() { "Record<string, JsonValue>" } else { "Record<string, never>" }),
        _ => {
            if let Some(value) = k.constant {
                push_scalar(out, value);
            } else if let Some(Value::Array(values)) = k.enumeration {
                for (index, value) in values.iter().enumerate() {
                    if index > 0 {
                        out.push_str(" | ");
                    }
                    push_scalar(out, value);
                }
            } else {
                out.push_str(if ty == "integer" { "number" } else { ty });
            }
        }
    }
}
