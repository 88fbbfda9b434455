# hostile: print without end under the default 64 MiB output ledger and a 2 s wall ceiling
# expect: any-failure
# limits: wall_ms=2000 output_bytes=67108864 heap_mb=512
line = "z" * 1000
while True:
    print(line)
