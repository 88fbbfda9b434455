// hostile: awaits tool calls one after another until a budget stops it: every call settles, so whatever the host kept per settled sub-call would pile up
// expect: budget
// limits: wall_ms=4000 compute_ms=3000 heap_mb=16
// (nothing stays pending, so the bound is a fresh engine's few MiB, not the cap: about 10,000 calls
// settle in the budget in a debug build, so a kilobyte kept per settled call passes it; measured +0 MiB)
// rss_mb: 8
const arg = { pad: "y".repeat(4096) };
for (;;) await tools.x(arg);
