//! A run's child process as the host holds it ([`Worker`]): started through the fork server under the
//! run's wall ceiling, abort and disposal ([`start_bounded`]), its fd-3 channel split into a reader and a
//! writer task fed by an outbox whose unwritten bytes are counted (they count against the heap cap),
//! and its stdout / stderr read as stray text ([`Stray`]). Dropping a worker kills its process group.
//!
//! Spec: RUN-028 (the wall ceiling covers start-up), RUN-032 (stray output); containment: a wedged fork
//! server holds no run past its ceiling.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::process::{self, GroupGuard, Leader, Pipe};
use super::zygote::Zygote;
use crate::code::{BindingNames, CodeRunErrorKind, CodeRunRequest, CodeRuntimeLimits};
use crate::value::js_number_string;

/// How long a persistent run's settlement waits for more stray output already on its way.
const READY_GRACE: Duration = Duration::from_millis(2);

/// A live child: its process group, its fd-3 channel, its pipes. A persistent environment keeps one for
/// its owner's next run; dropping it kills the whole group.
pub(super) struct Worker {
    pub(super) child: Leader,
    pub(super) group: GroupGuard,
    pub(super) reader: tokio::net::unix::OwnedReadHalf,
    pub(super) outbox: mpsc::UnboundedSender<Vec<u8>>,
    /// Bytes queued on the outbox and not yet written to fd 3 (a child that does not read makes them
    /// pile up; they count against the heap cap with the pending calls).
    pub(super) queued: Arc<AtomicU64>,
    pub(super) writer: tokio::task::JoinHandle<()>,
    pub(super) stdout: Option<Stray<Pipe>>,
    pub(super) stderr: Option<Stray<Pipe>>,
    /// fd-3 bytes read but not yet consumed as frames.
    pub(super) inbox: Vec<u8>,
    /// The id of the fork server's names table this child holds (`zygote.rs`): inherited at its fork, and
    /// kept past its first boot only if that boot used it.
    pub(super) table: Option<u64>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.group.kill();
        self.writer.abort();
    }
}

impl Worker {
    /// A fresh child forked by the zygote (spawned directly when it cannot fork), for a per-call run and
    /// for a persistent environment's first run alike.
    pub(super) async fn start(zygote: &Zygote, wanted: Option<&BindingNames>) -> std::io::Result<Self> {
        let (spawned, table) = zygote.start(wanted).await?;
        let process::Spawned { child, group, channel, stdout, stderr } = spawned;
        let (reader, mut writer) = channel.into_split();
        let (outbox, mut outbox_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let queued = Arc::new(AtomicU64::new(0));
        let written = Arc::clone(&queued);
        let writer = tokio::spawn(async move {
            while let Some(frame) = outbox_rx.recv().await {
                let sent = writer.write_all(&frame).await;
                written.fetch_sub(frame.len() as u64, Ordering::Relaxed);
                if sent.is_err() {
                    break;
                }
            }
        });
        Ok(Self { child, group, reader, outbox, queued, writer, stdout: Some(Stray::new(stdout)), stderr: Some(Stray::new(stderr)), inbox: Vec::new(), table })
    }
}

/// A persistent run's environment: the owner's worker (`None`: start one) and its release token.
pub(super) struct Resident {
    pub(super) worker: Option<Worker>,
    pub(super) released: CancellationToken,
}

/// [`Worker::start`] under the run's wall ceiling (counted from `requested`), abort signal and disposal.
pub(super) async fn start_bounded(
    zygote: &Zygote,
    limits: CodeRuntimeLimits,
    disposed: &CancellationToken,
    request: &CodeRunRequest,
    requested: Instant,
    wanted: Option<&BindingNames>,
) -> Result<Worker, (CodeRunErrorKind, String)> {
    let wall = Duration::try_from_secs_f64(limits.max_wall_ms / 1000.0).unwrap_or(Duration::MAX);
    let deadline = requested.checked_add(wall).unwrap_or_else(|| requested + Duration::from_secs(86_400 * 365));
    tokio::select! {
        biased;
        () = request.signal.token().cancelled() => Err((CodeRunErrorKind::Abort, request.signal.reason())),
        () = disposed.cancelled() => Err((CodeRunErrorKind::Abort, "runtime disposed".to_owned())),
        () = sleep_until(deadline) => Err((
            CodeRunErrorKind::Timeout,
            format!("wall-clock ceiling reached ({}ms)", js_number_string(limits.max_wall_ms)),
        )),
        started = Worker::start(zygote, wanted) => started.map_err(|e| {
            (CodeRunErrorKind::WorkerExit, format!("worker error: cannot start {}: {e}", zygote.interpreter().display()))
        }),
    }
}

/// Stray output already waiting in an open pipe (a persistent run's settlement reads what is there, and
/// waits for no more).
pub(super) async fn next_ready<R: AsyncRead + Unpin>(pipe: &mut Option<Stray<R>>) -> Option<String> {
    let stray = pipe.as_mut()?;
    tokio::time::timeout(READY_GRACE, stray.next()).await.ok().flatten()
}

/// A stray-output pipe read as UTF-8 text chunks (an incomplete trailing sequence waits for its rest).
pub(super) struct Stray<R> {
    pub(super) pipe: R,
    pub(super) carry: Vec<u8>,
    pub(super) buffer: Vec<u8>,
}

impl<R: AsyncRead + Unpin> Stray<R> {
    pub(super) fn new(pipe: R) -> Self {
        Self { pipe, carry: Vec::new(), buffer: vec![0; 1 << 16] }
    }

    /// The next chunk of text, or `None` at EOF (or on a read error).
    pub(super) async fn next(&mut self) -> Option<String> {
        loop {
            let n = self.pipe.read(&mut self.buffer).await.unwrap_or(0);
            if n == 0 {
                if self.carry.is_empty() {
                    return None;
                }
                let rest = std::mem::take(&mut self.carry);
                return Some(String::from_utf8_lossy(&rest).into_owned());
            }
            self.carry.extend_from_slice(&self.buffer[..n]);
            let valid = match std::str::from_utf8(&self.carry) {
                Ok(_) => self.carry.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => self.carry.len(),
            };
            if valid == 0 {
                continue;
            }
            let rest = self.carry.split_off(valid);
            let text = String::from_utf8_lossy(&std::mem::replace(&mut self.carry, rest)).into_owned();
            return Some(text);
        }
    }
}

/// The next stray chunk of an open pipe; pending forever once the pipe is closed.
pub(super) async fn next_stray<R: AsyncRead + Unpin>(pipe: &mut Option<Stray<R>>) -> Option<String> {
    match pipe.as_mut() {
        Some(stray) => stray.next().await,
        None => std::future::pending().await,
    }
}
