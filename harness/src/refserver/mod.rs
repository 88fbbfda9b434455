//! The reference `dsh-tools` served over the adapter protocol (`conformance/PROTOCOL.md`).
//!
//! [`Server`] is transport-agnostic: one JSON-RPC request in, one response out, event notifications to a
//! sink, events and responses ordered through one exit ([`outbox`]). Its two transports are the
//! in-process [`ReferenceSubject`] and the `dsh-reference-adapter` binary (stdio). Fixtures of
//! `spec/README.md` are interpreted in [`engine`] and its helpers.
//!
//! # Module map
//! Requests flow one way: [`server`] → [`session`] → [`engine`] → [`fixtures`] and the [`code`] /
//! [`result`] helpers, all over [`shared`].
//!
//! - [`server`]: request dispatch and the session table; [`session`]: one session's requests and leaks;
//!   [`shared`]: what fixtures, call tasks and the session share (event exit, gates, calls, tokens, marks,
//!   tasks).
//! - [`outbox`]: event `seq`, `eventsThrough`, the single ordered exit; [`rpc`]: JSON-RPC envelopes.
//! - [`gates`], [`calls`]: gates and started calls of a session; [`quiesce`]: answering only once the
//!   session's tasks have run as far as they can.
//! - [`engine`]: the `dsh-tools` runtime of a session and the fixture interpretation.
//! - [`capabilities`]: the `initialize` answer; [`schema`]: the `schema/*` requests (feature `schema`).
//! - [`deep`]: parse, write, clone and drop JSON of any depth; [`runtime`]: the big-stack tokio runtime.
//! - [`subject`] and [`transcript`]: the in-process subject.
//!
//! # What is interpreted, what is rejected
//! Implemented: every instruction; tool fixtures (DSL `parameters` and `rawParameters`, output schema,
//! render `text`/`json`/`content`/`throw`/`missing`, `presentationMeta`, `timeoutMs` incl. non-finite
//! strings, every `concurrency` classifier, `finalizeContent`, bodies); agents (scopes, `scope/restrict`
//! masks, `scope/drop` through `dispose_scope`); every listener kind — `preExecute`, guards (fallible: a
//! `throw` in `do` is final), `execute` around-wrappers (every `around`), `postExecute` (every decision),
//! `results`, `changes` — with `prepend: true` (except guards, which have no such option upstream either);
//! `setup.approval` (an `ApprovalSeam` running `do`, see [`fixtures::approval`]); `events/waitFor`;
//! `handle/dispose` of a handle disposed already (a no-op, as its disposer is idempotent);
//! `sdk/render` (`dsh_tools::sdk`; served, but `sdk` is not advertised: see `capabilities.rs`).
//!
//! A `results` listener's `do` runs synchronously up to its first wait, the rest as a session task (the
//! pipeline does not await it, as upstream's emitter does not await a listener's promise); a `throw` in
//! that rest is reported through the runtime's `ObserverFailureLog`, as a rejecting promise is logged.
//!
//! Rejected with `rpc::UNSUPPORTED`, naming what is missing: waiting instructions in synchronous
//! callbacks (guards, `finalizeContent`: synchronous upstream too), `render: { invalid: true }`
//! (upstream passes a non-content render value through as the result's `content`; `RenderFn` returns
//! content blocks by type). `prompt/assemble` is served by [`prompt`]; `setup.runtime`, `runtimeLimits`
//! and the `run_code` dispatch log by [`code`].

pub mod capabilities;
pub mod calls;
pub mod code;
pub mod deep;
pub mod engine;
pub mod fixtures;
pub mod gates;
pub mod outbox;
pub mod prompt;
pub mod quiesce;
pub mod result;
pub mod rpc;
pub mod runtime;
pub mod schema;
pub mod server;
pub mod session;
pub mod shared;
pub mod subject;
pub mod transcript;

#[cfg(test)]
mod tests;

pub use server::Server;
pub use subject::ReferenceSubject;
