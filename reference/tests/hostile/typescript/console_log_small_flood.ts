// hostile: logs tiny lines as fast as it can: millions of log entries, each a host allocation
// expect: budget
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64 model_text_bytes=65536
// rss_mb: 192
for (;;) console.log("a");
