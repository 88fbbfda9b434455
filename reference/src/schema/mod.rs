//! Schemas: the `defineTool` DSL compiler ([`dsl`]), the enforced raw-subset assertion ([`check`]) and value
//! validation ([`validate`]). Everything walks with explicit work stacks.
//!
//! Spec: ARG-004, ARG-009..ARG-015, OUT-003, REG-007, SCHEMA-001..SCHEMA-031.

pub mod check;
pub mod dsl;
pub(crate) mod path;
pub mod validate;
