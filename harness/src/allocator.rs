//! The harness binaries' allocator: mimalloc, told to keep the memory freed during a run.
//!
//! The suite builds and frees many large values (the 100,000-level corpus items, 64 MiB code-run logs). By
//! default mimalloc hands freed arena memory back to the kernel a few milliseconds later, and the next large
//! value faults it in again: against the in-process reference that round trip (`madvise`, the TLB
//! shootdowns it sends to the other cores, zeroing the pages again) was measured at 1.5–2 s of the four
//! 64 MiB trials' 2–2.4 s of system time. A run is short and its peak is what it is, so the binaries keep
//! what they freed for reuse. The `dsh-tools` library itself leaves allocator choices to whoever embeds it.

/// mimalloc v3's `mi_option_purge_delay` (`mimalloc.h`'s `mi_option_t`; v2 numbers it the same): how many
/// milliseconds freed memory waits before it is returned to the kernel, `-1` for never.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Makes mimalloc keep freed memory for the rest of the process instead of returning it to the kernel.
/// Call it first thing in `main` of a binary whose `#[global_allocator]` is `mimalloc::MiMalloc`.
pub fn keep_freed_memory() {
    // SAFETY: `mi_option_set` only stores a number in mimalloc's option table (read again at every purge
    // decision); it takes no pointers and is safe to call at any time from any thread.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
}

/// The option as mimalloc reads it now.
pub fn purge_delay() -> i64 {
    // SAFETY: as above, a read of the option table.
    #[allow(unsafe_code)]
    let value = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
    i64::from(value)
}

#[cfg(test)]
mod tests {
    /// The option number is mimalloc's purge delay: before it is set it reads that option's default (1 s),
    /// which no neighbouring option shares; afterwards it reads "never".
    #[test]
    fn the_purge_delay_is_set_to_never() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(super::purge_delay(), 1000, "option 15 is not mimalloc's purge delay (default 1000 ms)");
        }
        super::keep_freed_memory();
        assert_eq!(super::purge_delay(), -1);
    }
}
