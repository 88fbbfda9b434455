// hostile: logs megabyte lines forever: the ledger fills, the failure text would carry all of it
// expect: output-limit: ^outer output exceeded 67108864 bytes$
// limits: wall_ms=2000 compute_ms=1500 heap_mb=64 model_text_bytes=65536
// rss_mb: 192
const line = "x".repeat(1 << 20);
for (;;) console.log(line);
