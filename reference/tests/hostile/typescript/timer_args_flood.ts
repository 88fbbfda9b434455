// hostile: timers carrying many extra arguments, so each pending timer holds a long argument list
// expect: worker-exit: memory limit
// limits: wall_ms=2000 compute_ms=1000 heap_mb=32
// rss_mb: 96
const f = () => {};
const args = Array.from({ length: 1000 }, (_, i) => i);
for (;;) setTimeout(f, 1e9, ...args);
