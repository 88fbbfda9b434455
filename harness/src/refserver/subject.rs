//! [`ReferenceSubject`]: the reference served in-process through the same [`Server`] the adapter binary
//! runs, so both give the same outcomes; it records the transcript an adapter would have exchanged.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use dsh_conformance::subject::{Reply, RpcError, Subject, SubjectError, SubjectInfo};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use super::deep;
use super::runtime;
use super::server::Server;
use super::transcript::Transcript;

/// How long shutdown waits for sessions to close before abandoning them.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// What the server sent, in the order it sent it.
enum Out {
    Notification(Value),
    Response(Value),
}

type Queue = Arc<Mutex<VecDeque<Out>>>;

fn lock(queue: &Queue) -> MutexGuard<'_, VecDeque<Out>> {
    queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The reference `dsh-tools` as an in-process [`Subject`].
pub struct ReferenceSubject {
    runtime: Option<Runtime>,
    server: Server,
    queue: Queue,
    transcript: Transcript,
    next_id: u64,
}

impl ReferenceSubject {
    /// A subject with its own runtime and a fresh server.
    pub fn new() -> std::io::Result<Self> {
        let (server, queue) = fresh_server();
        Ok(ReferenceSubject {
            runtime: Some(runtime::build()?),
            server,
            queue,
            transcript: Transcript::default(),
            next_id: 0,
        })
    }

    fn shut_down(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            let server = self.server.clone();
            // Sessions hold deep values: close them on the runtime's big stacks, not here.
            // Sessions hold deep values: close them on the runtime's big stacks (`block_on` would run the
            // future on this thread).
            let closing = runtime.spawn(async move { tokio::time::timeout(CLOSE_GRACE, server.close_all()).await });
            let _ = runtime.block_on(closing);
            runtime.shutdown_background();
        }
        for out in lock(&self.queue).drain(..) {
            match out {
                Out::Notification(v) | Out::Response(v) => deep::dismantle(v),
            }
        }
    }
}

fn fresh_server() -> (Server, Queue) {
    let queue: Queue = Arc::default();
    let sink = queue.clone();
    let server = Server::new(move |notification| lock(&sink).push_back(Out::Notification(notification)));
    (server, queue)
}

impl Drop for ReferenceSubject {
    fn drop(&mut self) {
        self.shut_down();
    }
}

impl Subject for ReferenceSubject {
    fn initialize(&mut self) -> Result<SubjectInfo, SubjectError> {
        let params = json!({
            "protocolVersion": super::capabilities::PROTOCOL_VERSION,
            "suite": { "name": "dsh-conformance", "version": env!("CARGO_PKG_VERSION") },
        });
        let reply = self.request("initialize", params, Duration::from_secs(10))?;
        let result = reply.result.map_err(|e| SubjectError::Protocol {
            message: format!("initialize failed: {} ({})", e.message, e.code),
        })?;
        info_from(&result).ok_or_else(|| SubjectError::Protocol {
            message: format!("malformed initialize result: {}", deep::to_line(&result)),
        })
    }

    fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Reply, SubjectError> {
        let (reply, request) = self.serve(method, params, timeout, false);
        if let Some(request) = request {
            deep::dismantle(request);
        }
        reply
    }

    fn request_keeping(&mut self, method: &str, params: Value, timeout: Duration) -> (Result<Reply, SubjectError>, Value) {
        let (reply, request) = self.serve(method, params, timeout, true);
        let params = request.and_then(|mut r| r.get_mut("params").map(Value::take)).unwrap_or_default();
        (reply, params)
    }

    fn restart(&mut self) -> Result<(), SubjectError> {
        self.shut_down();
        let runtime = runtime::build().map_err(|e| SubjectError::Crash {
            status: "runtime".into(),
            stderr_tail: format!("cannot build the tokio runtime: {e}"),
        })?;
        let (server, queue) = fresh_server();
        (self.runtime, self.server, self.queue) = (Some(runtime), server, queue);
        Ok(())
    }

    fn take_transcript(&mut self) -> Vec<String> {
        self.transcript.take()
    }

    fn discard_transcript(&mut self) {
        self.transcript.clear();
    }
}

impl ReferenceSubject {
    /// Serves one request. `keep`: the request comes back (the server only reads it), so the transcript
    /// shows it as a line rendered now instead of holding it; otherwise the transcript holds it and nothing
    /// comes back. Nothing comes back either when the server still holds it (a timed-out request).
    fn serve(&mut self, method: &str, params: Value, timeout: Duration, keep: bool) -> (Result<Reply, SubjectError>, Option<Value>) {
        let Some(runtime) = &self.runtime else {
            let request = deep::object([("params", params)]);
            return (Err(SubjectError::Crash { status: "shut down".into(), stderr_tail: String::new() }), Some(request));
        };
        self.next_id += 1;
        let request = Arc::new(deep::object([
            ("jsonrpc", "2.0".into()),
            ("id", self.next_id.into()),
            ("method", method.into()),
            ("params", params),
        ]));
        if keep {
            self.transcript.sent_rendered(&request);
        } else {
            self.transcript.sent(Arc::clone(&request));
        }
        let (server, queue, served) = (self.server.clone(), self.queue.clone(), Arc::clone(&request));
        let mut task = runtime.spawn(async move {
            server.handle_with(&served, |response| lock(&queue).push_back(Out::Response(response))).await;
        });
        let reply = match runtime.block_on(async { tokio::time::timeout(timeout, &mut task).await }) {
            Err(_) => {
                task.abort();
                Err(SubjectError::Timeout { method: method.to_owned(), waited: timeout })
            }
            Ok(Err(failure)) => Err(SubjectError::Crash { status: "panicked".into(), stderr_tail: failure.to_string() }),
            Ok(Ok(())) => self.collect_reply(method),
        };
        (reply, Arc::try_unwrap(request).ok())
    }

    /// Takes the notifications up to and including the response from the queue.
    fn collect_reply(&mut self, method: &str) -> Result<Reply, SubjectError> {
        let mut events = Vec::new();
        loop {
            let next = lock(&self.queue).pop_front();
            match next {
                None => {
                    return Err(SubjectError::Protocol { message: format!("no response to {method}") });
                }
                Some(Out::Notification(mut notification)) => {
                    // As for the response below: rendered now, so the event's params move to the caller
                    // instead of being copied (an event may carry a 64 MiB result).
                    self.transcript.received_rendered(&notification);
                    if let Some(params) = notification.get_mut("params") {
                        events.push(params.take());
                    }
                    deep::dismantle(notification);
                }
                Some(Out::Response(mut response)) => {
                    if response.get("result").is_none() {
                        let error = rpc_error(response.get("error"));
                        self.transcript.received(response);
                        return Ok(Reply { result: Err(error), events });
                    }
                    // The result goes to the caller whole; the transcript keeps the response as sent in the
                    // form it is shown in, rendered now (one line, cut at its cap), so no copy is made.
                    self.transcript.received_rendered(&response);
                    let result = response.get_mut("result").map(Value::take).unwrap_or_default();
                    deep::dismantle(response);
                    return Ok(Reply { result: Ok(result), events });
                }
            }
        }
    }
}

fn rpc_error(error: Option<&Value>) -> RpcError {
    let error = error.cloned().unwrap_or(Value::Null);
    RpcError {
        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: error.get("message").and_then(Value::as_str).unwrap_or("").to_owned(),
        data: error.get("data").cloned(),
    }
}

fn info_from(result: &Value) -> Option<SubjectInfo> {
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?.iter().map(|s| s.as_str().map(str::to_owned)).collect()
    };
    let implementation = result.get("implementation")?;
    let capabilities = result.get("capabilities")?;
    Some(SubjectInfo {
        protocol_version: result.get("protocolVersion")?.as_str()?.to_owned(),
        name: implementation.get("name")?.as_str()?.to_owned(),
        version: implementation.get("version")?.as_str()?.to_owned(),
        language: implementation.get("language")?.as_str()?.to_owned(),
        profiles: strings(capabilities.get("profiles")?)?,
        features: strings(capabilities.get("features")?)?,
        runtimes: strings(capabilities.get("runtimes")?)?,
    })
}
