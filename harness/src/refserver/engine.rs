//! The `dsh-tools` side of a session: builds the `ToolRuntime` from `setup` and serves the requests that
//! reach it (placeholder until the reference's runtime lands: only an empty setup opens).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use super::rpc::{Failure, Params};
use super::session::Shared;

/// A started call's task.
pub type CallTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The runtime of one session.
pub struct Engine {
    _shared: Arc<Shared>,
}

impl Engine {
    /// Builds the runtime and registers the setup's agents, tools and hooks, in that order.
    pub fn open(shared: Arc<Shared>, setup: &Value) -> Result<Engine, Failure> {
        let empty = match setup {
            Value::Null => true,
            Value::Object(fields) => fields.is_empty(),
            _ => return Err(Failure::params("`setup` must be an object")),
        };
        if !empty {
            return Err(Failure::unsupported("the dsh-tools ToolRuntime (not yet in the reference)"));
        }
        Ok(Engine { _shared: shared })
    }

    /// Starts a call: records it and returns the task that executes it.
    pub fn start_call(&self, _params: Params<'_>) -> Result<CallTask, Failure> {
        Err(Failure::unsupported("execute (the dsh-tools ToolRuntime is not yet in the reference)"))
    }

    /// Serves a request the engine owns; `None` for an unknown method.
    pub fn handle(&self, method: &str, _params: Params<'_>) -> Option<Result<Value, Failure>> {
        match method {
            "tools/register" | "hooks/add" | "scope/restrict" | "scope/presentAs" | "scope/open" | "scope/drop"
            | "handle/dispose" | "tools/get" | "tools/schemas" | "tools/executionMode" | "prompt/assemble"
            | "sdk/render" => Some(Err(Failure::unsupported(method))),
            _ => None,
        }
    }

    /// Drops the runtime's registrations.
    pub fn close(&self) {}
}
