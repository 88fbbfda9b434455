//! Ready-made `tools/execute` wrappers over a [`ToolRuntime`](crate::runtime::ToolRuntime): an
//! enforced per-tool timeout with the semantics of upstream's `@deepseek-ai/dsh-tool-call-timeout-policy`
//! ([`timeout`]), a concurrency limit ([`limit`]) and, with the `tracing` feature, a `tracing` span per
//! call and per stage (`trace`). Each installs itself with one call and is removed by dropping the
//! returned guard.
//!
//! # Order
//! `tools/execute` wrappers compose in registration order, the first registered outermost (use the
//! runtime's `prepend_execute` to go outside those already there). A timeout registered outside a
//! limit counts the time spent waiting for a permit; registered inside, only the time running.
//!
//! A tower `Layer` is not offered: a wrapper borrows the execution for the length of the call
//! (`ExecuteNext<'a>`), which a `tower::Service`'s owned, `'static` request cannot express.

pub mod limit;
pub mod timeout;
#[cfg(feature = "tracing")]
pub mod trace;

pub use limit::ConcurrencyLimit;
pub use timeout::{TimeoutPolicy, tool_timeout_result};
#[cfg(feature = "tracing")]
pub use trace::{CallTracing, TracingGuards};
