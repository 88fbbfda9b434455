//! Schemas: the `defineTool` DSL compiler ([`dsl`]), the enforced raw-subset assertion ([`check`]) and value
//! validation ([`validate`]). Everything walks with explicit work stacks.
//!
//! Spec: ARG, OUT.

pub mod check;
pub mod dsl;
pub(crate) mod path;
pub mod validate;
