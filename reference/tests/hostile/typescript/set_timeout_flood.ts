// hostile: schedules far-future timers in a busy loop until something stops it (each lives in host memory)
// expect: worker-exit: ^worker error: Worker terminated due to reaching memory limit: JS heap out of memory$
// limits: wall_ms=10000 compute_ms=8000 heap_mb=32
// (a compute budget far beyond what the flood needs: on a loaded machine the budget it tests still trips first)
// rss_mb: 96
const f = () => {};
for (;;) setTimeout(f, 1e9);
