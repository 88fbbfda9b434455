//! Diagnostic paths kept as parent-linked segments and rendered only when a violation names them, so walking
//! a schema or value 100,000 levels deep costs linear memory instead of one ever-longer string per level.
//!
//! Spec: ARG-012, OUT-003, SCHEMA-027.

/// One path step.
#[derive(Clone, Copy)]
pub(crate) enum Seg<'a> {
    /// `.name` (a property or a keyword).
    Dot(&'a str),
    /// `.properties.name` (schema walk).
    Property(&'a str),
    /// `.oneOf[i]` (schema walk).
    OneOf(usize),
    /// `[i]` (array element).
    Index(usize),
    /// A value-property step: `name` at an empty root, else `.name`.
    Key(&'a str),
}

/// Arena of path nodes; index 0 is always the root.
pub(crate) struct Paths<'a> {
    root: &'a str,
    nodes: Vec<(usize, Seg<'a>)>,
}

/// Handle of one path node.
pub(crate) type PathId = usize;

/// The root node's id.
pub(crate) const ROOT: PathId = usize::MAX;

impl<'a> Paths<'a> {
    pub(crate) fn new(root: &'a str) -> Self {
        // Grown on demand: only nested containers and reported violations take a node, so a flat value
        // allocates none (a pre-sized 2 KiB arena was off glibc's fast path and cost more than the walk).
        Self { root, nodes: Vec::new() }
    }

    /// Extend `parent` by one step.
    pub(crate) fn push(&mut self, parent: PathId, seg: Seg<'a>) -> PathId {
        if self.nodes.capacity() == 0 {
            // The first node: room for a typical value's containers at once (512 bytes).
            self.nodes.reserve(16);
        }
        self.nodes.push((parent, seg));
        self.nodes.len() - 1
    }

    /// Render a path. `empty_root` is what an empty root renders as when the path is the root itself
    /// (upstream's `diagnosticPath`: the argument root `''` reads as `arguments`).
    pub(crate) fn render(&self, id: PathId) -> String {
        let mut segs = Vec::new();
        let mut cursor = id;
        while cursor != ROOT {
            match self.nodes.get(cursor) {
                Some((parent, seg)) => {
                    segs.push(*seg);
                    cursor = *parent;
                }
                None => break,
            }
        }
        let mut out = String::from(self.root);
        for seg in segs.iter().rev() {
            match seg {
                Seg::Dot(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                Seg::Property(name) => {
                    out.push_str(".properties.");
                    out.push_str(name);
                }
                Seg::OneOf(i) => {
                    out.push_str(".oneOf[");
                    out.push_str(&i.to_string());
                    out.push(']');
                }
                Seg::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
                Seg::Key(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
            }
        }
        out
    }

    /// Render for a value diagnostic: an empty rendering reads as `arguments`.
    pub(crate) fn diagnostic(&self, id: PathId) -> String {
        let rendered = self.render(id);
        if rendered.is_empty() { "arguments".to_owned() } else { rendered }
    }
}
