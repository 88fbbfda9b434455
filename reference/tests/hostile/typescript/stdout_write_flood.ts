// hostile: writes to process.stdout forever, each write with a callback queued as a microtask
// expect: budget
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64 model_text_bytes=65536
// rss_mb: 192
const chunk = "z".repeat(1 << 16);
for (;;) process.stdout.write(chunk, () => {});
