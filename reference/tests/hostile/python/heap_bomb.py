# hostile: grow a string until memory runs out
# expect: worker-exit: memory limit
# limits: heap_mb=64 wall_ms=20000 compute_ms=20000
s = "x"
while True:
    s += s
