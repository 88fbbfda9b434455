// hostile: allocates arrays of objects until the heap is gone
// expect: worker-exit: ^worker error: Worker terminated due to reaching memory limit: JS heap out of memory$
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64
// rss_mb: 128
const keep = [];
for (;;) keep.push({ a: [1, 2, 3], b: "s" + keep.length });
