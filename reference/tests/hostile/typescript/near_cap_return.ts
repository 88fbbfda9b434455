// hostile: returns a 60 MB string, just under the 64 MiB output ledger, so it succeeds and every host copy of it is made
// expect: ok
// limits: wall_ms=20000 compute_ms=15000 heap_mb=128 model_text_bytes=65536
// (the completion's host copies are outside the heap cap, bounded by the output ledger: measured +120 MiB
// alone and after huge_return, +180 MiB once in the whole corpus after runs abandoned at the backstop, one
// copy more, cause not pinned down (likely the allocator's state those runs' threads left); the bound is
// the corpus's usual heap cap plus 64 MiB)
// rss_mb: 192
return "r".repeat(60 * 1024 * 1024);
