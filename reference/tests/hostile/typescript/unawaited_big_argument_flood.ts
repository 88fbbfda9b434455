// hostile: un-awaited tool calls whose argument is a 1 MB string: each call's argument is copied out of the engine
// expect: worker-exit: memory limit
// limits: wall_ms=10000 compute_ms=8000 heap_mb=64
// (a compute budget far beyond what the flood needs: on a loaded machine the budget it tests still trips first)
// rss_mb: 128
const big = { blob: "x".repeat(1 << 20) };
for (;;) tools.x(big);
