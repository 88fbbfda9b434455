// hostile: allocates arrays of objects until the heap is gone
// expect: worker-exit: ^worker error: Worker terminated due to reaching memory limit: JS heap out of memory$
// limits: wall_ms=10000 compute_ms=8000 heap_mb=64
// (a compute budget far beyond what the flood needs: on a loaded machine the budget it tests still trips first)
// rss_mb: 128
const keep = [];
for (;;) keep.push({ a: [1, 2, 3], b: "s" + keep.length });
