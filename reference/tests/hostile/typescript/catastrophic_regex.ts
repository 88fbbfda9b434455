// hostile: exponential backtracking in a regular expression
// expect: timeout: ^compute budget exhausted \(1000ms busy\)$
// limits: wall_ms=2000 compute_ms=1000 heap_mb=64
// rss_mb: 128
return /^(a+)+$/.test("a".repeat(40) + "!");
