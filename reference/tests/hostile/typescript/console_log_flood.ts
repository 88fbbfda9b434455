// hostile: logs megabyte lines forever: the ledger fills, the failure text would carry all of it
// expect: output-limit: ^outer output exceeded 67108864 bytes$
// limits: wall_ms=10000 compute_ms=8000 heap_mb=64 model_text_bytes=65536
// (a compute budget far beyond what the flood needs: on a loaded machine the budget it tests still trips first)
// rss_mb: 192
const line = "x".repeat(1 << 20);
for (;;) console.log(line);
