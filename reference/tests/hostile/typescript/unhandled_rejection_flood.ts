// hostile: rejects promises nobody handles, each with a long reason, in a busy loop
// expect: budget
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64
// rss_mb: 128
const reason = new Error("r".repeat(1 << 16));
for (;;) Promise.reject(reason);
