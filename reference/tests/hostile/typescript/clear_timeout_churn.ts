// hostile: schedules and clears a far-future timer in a busy loop: nothing stays pending, but each schedule queued its key for the event loop, which never runs
// expect: timeout: ^compute budget exhausted \(8000ms busy\)$
// limits: wall_ms=10000 compute_ms=8000 heap_mb=32
// (nothing stays pending, so the host holds a fresh engine and no more: before the queue of woken keys
// dropped the keys of cleared timers it grew 8 bytes a schedule, uncharged: +18 MiB over 8 s of busy
// time in a debug build, without end under a longer budget)
// rss_mb: 8
const f = () => {};
for (;;) clearTimeout(setTimeout(f, 1e9));
