// hostile: returns a 60 MB string, just under the 64 MiB output ledger, so it succeeds and every host copy of it is made
// expect: ok
// limits: wall_ms=20000 compute_ms=15000 heap_mb=128 model_text_bytes=65536
// (the completion's host copies are outside the heap cap, bounded by the output ledger; measured +120
// MiB: the bound is that plus 32 MiB, so one more host copy of the completion passes it)
// rss_mb: 152
return "r".repeat(60 * 1024 * 1024);
