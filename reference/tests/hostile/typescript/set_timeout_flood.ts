// hostile: schedules far-future timers in a busy loop until something stops it (each lives in host memory)
// expect: worker-exit: ^worker error: Worker terminated due to reaching memory limit: JS heap out of memory$
// limits: wall_ms=2000 compute_ms=1000 heap_mb=32
// rss_mb: 96
const f = () => {};
for (;;) setTimeout(f, 1e9);
