// hostile: timers carrying many extra arguments, so each pending timer holds a long argument list
// expect: worker-exit: memory limit
// limits: wall_ms=10000 compute_ms=8000 heap_mb=32
// (a compute budget far beyond what the flood needs: on a loaded machine the budget it tests still trips first)
// rss_mb: 96
const f = () => {};
const args = Array.from({ length: 1000 }, (_, i) => i);
for (;;) setTimeout(f, 1e9, ...args);
