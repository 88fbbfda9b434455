// hostile: unbounded recursion
// expect: exception: ^(RangeError|InternalError): (Maximum call stack size exceeded|stack overflow)
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64
// rss_mb: 128
function down(n: number): number { return down(n + 1) + 1; }
return down(0);
