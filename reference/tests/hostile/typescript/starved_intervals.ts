// hostile: 20,000 one-millisecond intervals whose callbacks are slow, so the event loop is always behind and every firing re-arms a timer
// expect: budget
// limits: wall_ms=3000 compute_ms=2500 heap_mb=32
// (the first suspect for set_interval_flood's growth under load, which was abandoned runs: host memory per firing or per wake
// while the loop is behind. The 20,000 intervals are charged 7.5 MiB and measured +8 MiB; about 100,000
// firings happen in the budget in a debug build, so a kilobyte kept per firing passes the bound: +113 MiB)
// rss_mb: 16
const slow = () => { for (let j = 0; j < 200; j++); };
for (let i = 0; i < 20000; i++) setInterval(slow, 1);
await new Promise(() => {});
