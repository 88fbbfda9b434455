//! The compiled form of a schema both validation passes read: one breadth-first pass over the schema's nodes
//! (the table itself as the queue) into a flat table of typed nodes, so walking a large value does no
//! keyword string matching. A node's children are pushed one after another, so a `oneOf` node and an object
//! node name their children by a range, and a compile makes two allocations whatever the schema's size.
//!
//! A plan borrows from its schema ([`Plan::compile`], what one `validate_json_schema_value` call uses) or
//! owns copies of what it reads ([`OwnedPlan`], what the registry keeps per registered tool so an
//! execution validates without compiling).
//!
//! Spec: ARG-009, OUT-003, SCHEMA-008, SCHEMA-009.

use serde_json::Value;

use crate::value::{deep_clone, dismantle};

/// A run of consecutive table entries (a node's children, an object's properties).
#[derive(Clone, Copy)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn new(start: usize, end: usize) -> Self {
        Self { start: index32(start), end: index32(end) }
    }

    /// The entries, as indices.
    pub(crate) fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A table index as a `u32` (saturating: no schema is anywhere near 4 G nodes).
fn index32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A value a node reads: in the schema, or copied into [`Plan::stored`] (an owned plan's).
#[derive(Clone, Copy)]
pub(crate) enum Held<'a> {
    Borrowed(&'a Value),
    Stored(u32),
}

/// A property name: in the schema, or copied into [`Plan::names`] (an owned plan's).
#[derive(Clone, Copy)]
pub(crate) enum Name<'a> {
    Borrowed(&'a str),
    Stored(u32),
}

/// A compiled schema node. Nodes are plain data (no drop glue): what they read is borrowed from the
/// schema or held by the plan.
#[derive(Clone, Copy)]
pub(crate) enum Node<'a> {
    /// No constraint (annotation-only schema).
    Any,
    /// Exactly one of the nodes `branches` must match.
    OneOf { branches: Span },
    /// `type: object`; `properties` indexes [`Plan::props`]; `required` is the schema's list, in its order
    /// (the walk reports missing names in it, see [`Plan::required`]); `all_required_declared` when every
    /// name in it is a declared property, whose [`Prop::required`] flag then says all the quick pass needs.
    Object { properties: Span, required: Option<Held<'a>>, closed: bool, all_required_declared: bool },
    /// `type: array`.
    Array { items: Option<usize> },
    /// A scalar type with optional `enum` / `const`.
    Scalar { ty: Scalar, allowed: Option<Held<'a>>, constant: Option<Held<'a>> },
    /// A `type` outside the subset (never in an asserted schema).
    Invalid,
    /// A node not compiled yet (only while [`Plan::compile`] runs).
    Todo(&'a Value),
}

/// One declared property of an object node.
#[derive(Clone, Copy)]
pub(crate) struct Prop<'a> {
    pub(crate) name: Name<'a>,
    pub(crate) node: usize,
    /// The name is in the node's `required` list.
    pub(crate) required: bool,
}

/// The scalar types of the subset.
#[derive(Clone, Copy)]
pub(crate) enum Scalar {
    String,
    Number,
    Integer,
    Boolean,
    Null,
}

/// A compiled schema; node 0 is the root.
pub(crate) struct Plan<'a> {
    pub(crate) nodes: Vec<Node<'a>>,
    /// Every object node's declared properties, in schema order.
    pub(crate) props: Vec<Prop<'a>>,
    /// Copies of the values an owned plan's nodes read (empty in a borrowed plan).
    stored: Vec<Value>,
    /// Copies of an owned plan's property names (empty in a borrowed plan).
    names: Vec<String>,
}

impl<'a> Plan<'a> {
    /// Compile a schema tree (total: any JSON value is a schema here; what is not a subset schema
    /// compiles to [`Node::Any`] or [`Node::Invalid`], as upstream's walk treats it).
    pub(crate) fn compile(schema: &'a Value) -> Self {
        // 8 nodes and 8 properties cover a typical tool schema.
        let mut nodes: Vec<Node<'a>> = Vec::with_capacity(8);
        let mut props: Vec<Prop<'a>> = Vec::with_capacity(8);
        nodes.push(Node::Todo(schema));
        let mut index = 0;
        while let Some(slot) = nodes.get(index) {
            let Node::Todo(schema) = *slot else {
                index += 1;
                continue;
            };
            let node = compile_one(schema, &mut nodes, &mut props);
            if let Some(slot) = nodes.get_mut(index) {
                *slot = node;
            }
            index += 1;
        }
        Self { nodes, props, stored: Vec::new(), names: Vec::new() }
    }

    /// The declared properties of an object node.
    pub(crate) fn properties(&self, span: Span) -> &[Prop<'a>] {
        self.props.get(span.range()).unwrap_or(&[])
    }

    /// A value a node reads.
    pub(crate) fn value<'s>(&'s self, held: Held<'a>) -> &'s Value {
        match held {
            Held::Borrowed(value) => value,
            Held::Stored(i) => self.stored.get(i as usize).unwrap_or(&Value::Null),
        }
    }

    /// A property's name.
    pub(crate) fn name<'s>(&'s self, name: Name<'a>) -> &'s str {
        match name {
            Name::Borrowed(name) => name,
            Name::Stored(i) => self.names.get(i as usize).map_or("", String::as_str),
        }
    }

    /// An object node's `required` list (empty when absent or not an array).
    pub(crate) fn required<'s>(&'s self, required: Option<Held<'a>>) -> &'s [Value] {
        match required.map(|held| self.value(held)) {
            Some(Value::Array(names)) => names,
            _ => &[],
        }
    }

    /// A copy that borrows nothing from the schema (values copied without recursion).
    pub(crate) fn into_owned(self) -> OwnedPlan {
        let Self { nodes, props, .. } = self;
        let mut stored = Vec::new();
        let mut store = |held: Held<'_>| match held {
            Held::Borrowed(value) => {
                stored.push(deep_clone(value));
                Held::Stored(index32(stored.len() - 1))
            }
            Held::Stored(i) => Held::Stored(i),
        };
        let nodes = nodes
            .into_iter()
            .map(|node| match node {
                Node::Any => Node::Any,
                Node::OneOf { branches } => Node::OneOf { branches },
                Node::Object { properties, required, closed, all_required_declared } => {
                    Node::Object { properties, required: required.map(&mut store), closed, all_required_declared }
                }
                Node::Array { items } => Node::Array { items },
                Node::Scalar { ty, allowed, constant } => {
                    Node::Scalar { ty, allowed: allowed.map(&mut store), constant: constant.map(&mut store) }
                }
                Node::Invalid => Node::Invalid,
                // Never left after compile; `Any` is what the walk makes of one.
                Node::Todo(_) => Node::Any,
            })
            .collect();
        let mut names = Vec::with_capacity(props.len());
        let props = props
            .into_iter()
            .map(|Prop { name, node, required }| {
                let name = match name {
                    Name::Borrowed(name) => {
                        names.push(name.to_owned());
                        Name::Stored(index32(names.len() - 1))
                    }
                    Name::Stored(i) => Name::Stored(i),
                };
                Prop { name, node, required }
            })
            .collect();
        OwnedPlan(Plan { nodes, props, stored, names })
    }
}

/// Push a child schema to compile later; its node index.
fn child<'a>(nodes: &mut Vec<Node<'a>>, schema: &'a Value) -> usize {
    nodes.push(Node::Todo(schema));
    nodes.len() - 1
}

/// Compile one schema node, pushing its children.
fn compile_one<'a>(schema: &'a Value, nodes: &mut Vec<Node<'a>>, props: &mut Vec<Prop<'a>>) -> Node<'a> {
    let Value::Object(map) = schema else { return Node::Any };
    let (mut ty, mut one_of, mut properties, mut required, mut additional, mut items, mut allowed, mut constant) =
        (None, None, None, None, None, None, None, None);
    for (key, value) in map {
        // Byte patterns compile to a length switch and inline byte compares; string patterns called
        // `memcmp` once per key and keyword, a fifth of a small validation in the profile.
        match key.as_bytes() {
            [b't', b'y', b'p', b'e'] => ty = Some(value),
            [b'o', b'n', b'e', b'O', b'f'] => one_of = Some(value),
            [b'p', b'r', b'o', b'p', b'e', b'r', b't', b'i', b'e', b's'] => properties = Some(value),
            [b'r', b'e', b'q', b'u', b'i', b'r', b'e', b'd'] => required = Some(value),
            [b'i', b't', b'e', b'm', b's'] => items = Some(value),
            [b'e', b'n', b'u', b'm'] => allowed = Some(value),
            [b'c', b'o', b'n', b's', b't'] => constant = Some(value),
            _ if key == "additionalProperties" => additional = Some(value),
            _ => {}
        }
    }
    if let Some(one_of) = one_of {
        let branches: &[Value] = match one_of {
            Value::Array(b) => b,
            _ => &[],
        };
        let first = nodes.len();
        for branch in branches {
            child(nodes, branch);
        }
        return Node::OneOf { branches: Span::new(first, nodes.len()) };
    }
    let scalar = |ty| Node::Scalar { ty, allowed: allowed.map(Held::Borrowed), constant: constant.map(Held::Borrowed) };
    match ty {
        None => Node::Any,
        Some(Value::String(t)) => match t.as_str() {
            "object" => {
                let first = props.len();
                if let Some(Value::Object(declared)) = properties {
                    for (key, schema) in declared {
                        let node = child(nodes, schema);
                        props.push(Prop { name: Name::Borrowed(key.as_str()), node, required: false });
                    }
                }
                let names: &[Value] = match required {
                    Some(Value::Array(names)) => names,
                    _ => &[],
                };
                let declared = props.get_mut(first..).unwrap_or_default();
                let mut all_required_declared = true;
                for name in names.iter().filter_map(Value::as_str) {
                    match declared.iter_mut().find(|p| matches!(p.name, Name::Borrowed(n) if n == name)) {
                        Some(prop) => prop.required = true,
                        None => all_required_declared = false,
                    }
                }
                Node::Object {
                    properties: Span::new(first, props.len()),
                    required: required.map(Held::Borrowed),
                    closed: additional == Some(&Value::Bool(false)),
                    all_required_declared,
                }
            }
            "array" => Node::Array { items: items.map(|schema| child(nodes, schema)) },
            "string" => scalar(Scalar::String),
            "number" => scalar(Scalar::Number),
            "integer" => scalar(Scalar::Integer),
            "boolean" => scalar(Scalar::Boolean),
            "null" => scalar(Scalar::Null),
            _ => Node::Invalid,
        },
        Some(_) => Node::Invalid,
    }
}

/// A compiled schema that owns what it reads, kept next to the schema it was compiled from (the
/// registry keeps one per registered tool's parameters and output). Dropped without recursion.
pub(crate) struct OwnedPlan(pub(crate) Plan<'static>);

impl OwnedPlan {
    /// Compile `schema` and copy what the plan reads out of it.
    pub(crate) fn new(schema: &Value) -> Self {
        Plan::compile(schema).into_owned()
    }
}

impl Drop for OwnedPlan {
    fn drop(&mut self) {
        // `enum` / `const` entries and `required` names are scalars in an asserted schema, but a plan is
        // total over any schema: take every copied value apart without recursion.
        for value in self.0.stored.drain(..) {
            dismantle(value);
        }
    }
}
