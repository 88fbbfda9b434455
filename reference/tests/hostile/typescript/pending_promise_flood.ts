// hostile: starts calls that never settle and keeps the promises alive, then waits on them all
// expect: budget
// limits: wall_ms=2000 compute_ms=1000 heap_mb=16
// rss_mb: 80
const pending = [];
for (;;) pending.push(tools.hang({ n: pending.length }));
