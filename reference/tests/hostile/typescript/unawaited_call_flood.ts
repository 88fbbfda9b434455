// hostile: calls a tool in a busy loop without awaiting, so every call stays pending in the host
// expect: budget
// limits: wall_ms=2000 compute_ms=1000 heap_mb=16
// rss_mb: 80
for (;;) tools.x({});
