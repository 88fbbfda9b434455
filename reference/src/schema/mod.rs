//! Schemas: the `defineTool` DSL compiler ([`dsl`]), the enforced raw-subset assertion ([`check`]), value
//! validation ([`validate`]), the lowering of real-world JSON Schemas into the subset ([`lower`]), and
//! the full-schema argument check typed and MCP tools run in their bodies ([`arguments`]). The first
//! three walk with explicit work stacks (100,000-level schemas); the lowering and the argument check
//! recurse, bounded by [`lower::MAX_DEPTH`].
//!
//! Spec: ARG-004, ARG-009..ARG-015, OUT-003, REG-007, SCHEMA-001..SCHEMA-031.

pub mod arguments;
pub mod check;
pub mod dsl;
pub mod lower;
pub(crate) mod path;
pub mod validate;
