// hostile: floods the console from timer callbacks and microtasks so that only the wall ceiling can stop it
// expect: budget
// limits: wall_ms=2000 compute_ms=60000 heap_mb=64 model_text_bytes=65536
// rss_mb: 192
const line = "y".repeat(4096);
function burst() { for (let i = 0; i < 64; i++) console.log(line); setTimeout(burst, 0); }
burst();
await new Promise(() => {});
