// hostile: returns an 80 MB string (past the default output ledger)
// expect: any-failure
// limits: wall_ms=2000 compute_ms=1000 heap_mb=256 model_text_bytes=65536
// rss_mb: 320
return "r".repeat(80 * 1024 * 1024);
