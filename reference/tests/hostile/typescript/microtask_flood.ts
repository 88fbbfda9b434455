// hostile: a microtask that queues two more, forever (the queue never drains)
// expect: budget
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64
// rss_mb: 128
function spawn() { queueMicrotask(spawn); queueMicrotask(spawn); }
spawn();
await new Promise(() => {});
