// hostile: starts intervals in a busy loop, each re-armed forever by the host
// expect: worker-exit: memory limit
// limits: wall_ms=10000 compute_ms=8000 heap_mb=32
// (a compute budget far beyond what the flood needs: on a loaded machine the budget it tests still trips first)
// rss_mb: 96
const f = () => {};
for (;;) setInterval(f, 1e9);
