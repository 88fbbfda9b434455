// hostile: every timer callback schedules two more, forever, and the program never settles
// expect: budget
// limits: wall_ms=1500 compute_ms=1000 heap_mb=64
// rss_mb: 128
function tick() { setTimeout(tick, 0); setTimeout(tick, 0); }
tick();
await new Promise(() => {});
