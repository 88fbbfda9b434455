//! The reference `dsh-tools` served over the adapter protocol (`conformance/PROTOCOL.md`).
//!
//! [`Server`] is transport-agnostic: one JSON-RPC request in, one response out, event notifications to a
//! sink, events and responses ordered through one exit ([`outbox`]). Its two transports are the
//! in-process [`ReferenceSubject`] and the `dsh-reference-adapter` binary (stdio). Fixtures of
//! `spec/README.md` are interpreted in [`engine`] and its helpers.
//!
//! # Module map
//! - [`server`]: request dispatch and the session table; [`session`]: one session's requests and leaks.
//! - [`outbox`]: event `seq`, `eventsThrough`, the single ordered exit; [`rpc`]: JSON-RPC envelopes.
//! - [`gates`], [`calls`]: gates and started calls of a session; [`quiesce`]: answering only once the
//!   session's tasks have run as far as they can.
//! - [`engine`]: the `dsh-tools` runtime of a session and the fixture interpretation.
//! - [`capabilities`]: the `initialize` answer.
//! - [`deep`]: parse, write, clone and drop JSON of any depth; [`runtime`]: the big-stack tokio runtime.
//! - [`subject`] and [`transcript`]: the in-process subject.

pub mod capabilities;
pub mod calls;
pub mod deep;
pub mod engine;
pub mod fixtures;
pub mod gates;
pub mod outbox;
pub mod quiesce;
pub mod result;
pub mod rpc;
pub mod runtime;
pub mod server;
pub mod session;
pub mod subject;
pub mod transcript;

#[cfg(test)]
mod tests;

pub use server::Server;
pub use subject::ReferenceSubject;
