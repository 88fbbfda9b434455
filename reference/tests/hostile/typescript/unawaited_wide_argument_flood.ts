// hostile: un-awaited tool calls whose argument is a wide array: small as JSON, large as host values
// expect: worker-exit: memory limit
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64
// rss_mb: 128
const wide = Array.from({ length: 100000 }, () => 0);
for (;;) tools.x({ wide });
