//! Call entry: the lossless argument snapshot (JavaScript property order), the registry-minted token, and
//! the content finalizer captured from the definition visible at entry.
//!
//! Spec: PIPE (snapshot at entry, opaque token), ARG (lossless arguments).

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::definition::FinalizeContentFn;
use crate::execution::{ExecutionToken, ToolExecution, ToolExecutionInput};
use crate::runtime::Inner;
use crate::value::js_property_order;

/// Per-call registry state kept outside the immutable execution view.
pub(crate) struct Call {
    pub(crate) exec: Arc<ToolExecution>,
    pub(crate) finalizer: Option<FinalizeContentFn>,
    pub(crate) deferred: Arc<Mutex<Vec<Value>>>,
    pub(crate) body_invoked: bool,
}

/// Materialize the execution.
pub(crate) fn create(inner: &Inner, input: ToolExecutionInput) -> Call {
    let ToolExecutionInput { call_id, name, mut arguments, signal, agent, parent } = input;
    let finalizer = inner.registry.resolve(&name, agent.as_ref()).and_then(|t| t.def.finalize_content.clone());
    js_property_order(&mut arguments);
    let exec = Arc::new(ToolExecution {
        token: ExecutionToken::mint(),
        call_id,
        name,
        arguments: Arc::new(arguments),
        signal,
        agent,
        parent,
    });
    Call { exec, finalizer, deferred: Arc::new(Mutex::new(Vec::new())), body_invoked: false }
}
