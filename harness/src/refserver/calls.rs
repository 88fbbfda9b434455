//! The calls of one session: each started call's caller signal and its published result, in start order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::deep;
use super::rpc::{Failure, INVALID_STATE};

struct Call {
    /// The caller-owned signal handed to `execute`.
    caller: CancellationToken,
    /// The result JSON once `execute` returned.
    result: watch::Sender<Option<Arc<Value>>>,
}

#[derive(Default)]
struct Table {
    order: Vec<String>,
    calls: HashMap<String, Call>,
}

/// The started calls of a session.
#[derive(Clone, Default)]
pub struct Calls {
    table: Arc<Mutex<Table>>,
}

impl Calls {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records a new call with its caller signal (already cancelled for `aborted: true`).
    pub fn start(&self, call_id: &str, aborted: bool) -> Result<CancellationToken, Failure> {
        let mut table = self.lock();
        if table.calls.contains_key(call_id) {
            return Err(Failure::new(INVALID_STATE, format!("call {call_id:?} was already started")));
        }
        let caller = CancellationToken::new();
        if aborted {
            caller.cancel();
        }
        let call = Call { caller: caller.clone(), result: watch::Sender::new(None) };
        table.calls.insert(call_id.to_owned(), call);
        table.order.push(call_id.to_owned());
        Ok(caller)
    }

    /// Forgets a call whose start failed before it was handed to the implementation.
    pub fn forget(&self, call_id: &str) {
        let mut table = self.lock();
        table.calls.remove(call_id);
        table.order.retain(|id| id != call_id);
    }

    /// Publishes the result of a call.
    pub fn finish(&self, call_id: &str, result: Value) {
        if let Some(call) = self.lock().calls.get(call_id) {
            call.result.send_replace(Some(Arc::new(result)));
        }
    }

    /// Cancels the caller signal of a call.
    pub fn abort(&self, call_id: &str) -> Result<(), Failure> {
        let table = self.lock();
        let call = table.calls.get(call_id).ok_or_else(|| Failure::unknown("call", call_id))?;
        call.caller.cancel();
        Ok(())
    }

    /// Waits for the result of a call and returns a copy of it.
    pub async fn wait(&self, call_id: &str) -> Result<Value, Failure> {
        let mut receiver = {
            let table = self.lock();
            table.calls.get(call_id).ok_or_else(|| Failure::unknown("call", call_id))?.result.subscribe()
        };
        let published = receiver
            .wait_for(Option::is_some)
            .await
            .map_err(|_| Failure::new(INVALID_STATE, format!("call {call_id:?} was dropped")))?
            .clone();
        Ok(published.map(|v| deep::clone(&v)).unwrap_or(Value::Null))
    }

    /// Calls started and not yet published, in start order.
    pub fn pending(&self) -> Vec<String> {
        let table = self.lock();
        table
            .order
            .iter()
            .filter(|id| table.calls.get(*id).is_some_and(|c| c.result.borrow().is_none()))
            .cloned()
            .collect()
    }
}
