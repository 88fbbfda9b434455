//! Shared by the containment tests (`containment_python.rs`, `containment_typescript.rs`): handing the
//! memory glibc's allocator kept after frees back to the kernel, so a resident-size reading measures what
//! the host still holds, not what a flood once made it allocate.

/// `malloc_trim(0)` where glibc provides it; nothing elsewhere.
pub fn trim_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        #[allow(unsafe_code)]
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's `malloc_trim` takes a byte count and only releases free memory.
        #[allow(unsafe_code)]
        unsafe {
            malloc_trim(0);
        }
    }
}
