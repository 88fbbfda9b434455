// hostile: returns an 80 MB string under a short wall ceiling: turning it into JSON is host work the engine's checks do not see
// expect: any-failure
// limits: wall_ms=400 compute_ms=8000 heap_mb=256 model_text_bytes=65536
// rss_mb: 320
return "r".repeat(80 * 1024 * 1024);
