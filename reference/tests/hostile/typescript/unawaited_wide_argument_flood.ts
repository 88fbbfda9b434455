// hostile: un-awaited tool calls whose argument is a wide array: small as JSON, large as host values
// expect: worker-exit: memory limit
// limits: wall_ms=10000 compute_ms=8000 heap_mb=64
// (a compute budget far beyond what the flood needs: on a loaded machine the budget it tests still trips first)
// rss_mb: 128
const wide = Array.from({ length: 100000 }, () => 0);
for (;;) tools.x({ wide });
