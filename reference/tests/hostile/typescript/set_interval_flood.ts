// hostile: starts intervals in a busy loop, each re-armed forever by the host
// expect: worker-exit: memory limit
// limits: wall_ms=2000 compute_ms=1000 heap_mb=32
// rss_mb: 96
const f = () => {};
for (;;) setInterval(f, 1e9);
