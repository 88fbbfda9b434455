//! The tokio runtime the reference runs on: multi-threaded, with 256 MiB thread stacks, because
//! recursive operations on 100,000-level JSON values (drop, clone, compare) need them.

use tokio::runtime::{Builder, Runtime};

/// Stack size of every runtime thread (workers and blocking threads).
pub const THREAD_STACK: usize = 256 << 20;

/// Builds the runtime a [`super::Server`] is driven on.
pub fn build() -> std::io::Result<Runtime> {
    Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(THREAD_STACK)
        .thread_name("dsh-reference")
        .enable_all()
        .build()
}
