// hostile: doubles a string until it cannot
// expect: any-failure: string too long|memory limit
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64
// rss_mb: 128
let s = "x";
for (;;) s += s;
