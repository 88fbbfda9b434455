// hostile: returns an object whose getter never returns, so snapshotting the completion spins
// expect: timeout: ^compute budget exhausted \(1000ms busy\)$
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64
// rss_mb: 128
return { get x() { for (;;) {} } };
