//! The embedder's handle on bodies that do not stop: [`ToolRuntime::in_flight`] lists every body still
//! pending (call, tool, agent, how long, whether its signal is cancelled), [`ToolRuntime::abandon`] drops
//! one now (its call fails `ABORTED`), and [`ToolRuntime::set_body_ceiling`] bounds every body (default
//! [`DEFAULT_BODY_CEILING`], 15 minutes; a body past it is dropped and its call fails `TOOL_TIMEOUT`).
//! The table and the clock are the pipeline's (`pipeline/inflight.rs`); this module is their facade.
//!
//! Cancellation stays cooperative, and bodies that honour their signal never meet the ceiling. It exists
//! for the ones that ignore it: without it such a body runs for ever, also once its `execute` future was
//! dropped (the rest of an execution runs on in the background).
//!
//! ```
//! use std::time::Duration;
//! use dsh_tools::typed::{JsonSchema, tool};
//! use dsh_tools::{ErrorCode, ToolExecutionInput, ToolRuntime};
//! # #[derive(serde::Deserialize, JsonSchema)] struct Empty {}
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = ToolRuntime::new(Default::default());
//! rt.set_body_ceiling(Some(Duration::from_millis(50)));
//! // A body that never looks at its signal.
//! let stuck = tool("stuck", "Never returns", |_: Empty, _ctx| async move { std::future::pending::<()>().await; Ok(()) })?;
//! let _stuck = rt.register(stuck, None)?;
//! let (result, listed) = tokio::join!(rt.execute(ToolExecutionInput::new("c1", "stuck", serde_json::json!({}))), async {
//!     tokio::time::sleep(Duration::from_millis(10)).await;
//!     rt.in_flight()
//! });
//! assert_eq!((listed.len(), listed[0].call_id.as_str(), listed[0].tool.as_str()), (1, "c1", "stuck"));
//! assert_eq!(result.error_code(), Some(&ErrorCode::TOOL_TIMEOUT));
//! assert!(rt.in_flight().is_empty());
//! # Ok(()) }
//! ```
//!
//! No catalog rule (issue 39).

use std::time::Duration;

use crate::execution::ExecutionToken;
use crate::pipeline::inflight::InFlightBody;
use crate::runtime::ToolRuntime;

pub use crate::pipeline::inflight::DEFAULT_BODY_CEILING;

impl ToolRuntime {
    /// Every body pending now (those that did not finish at their first poll), longest-running first.
    /// A body listed with `cancelled: true` is ignoring its signal.
    pub fn in_flight(&self) -> Vec<InFlightBody> {
        self.pipeline().in_flight.list()
    }

    /// Drop the pending body of the execution `token` now: its call resolves to an `ABORTED` failure
    /// naming the tool, and whatever the body was doing stops at its current await. `false` when no such
    /// body is in flight. For a body that ignores cancellation; cancel the call's signal first.
    pub fn abandon(&self, token: ExecutionToken) -> bool {
        self.pipeline().in_flight.abandon(token)
    }

    /// Bound every body by `ceiling` (`None`: no bound), from the next body that starts waiting on.
    /// A body past it is dropped and its call fails with `TOOL_TIMEOUT` naming the tool and the ceiling.
    /// The default is [`DEFAULT_BODY_CEILING`].
    pub fn set_body_ceiling(&self, ceiling: Option<Duration>) {
        self.pipeline().in_flight.set_ceiling(ceiling);
    }

    /// The current body ceiling.
    pub fn body_ceiling(&self) -> Option<Duration> {
        self.pipeline().in_flight.ceiling()
    }
}
