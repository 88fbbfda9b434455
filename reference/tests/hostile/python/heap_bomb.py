# hostile: grow a string until memory runs out
# expect: worker-exit: memory limit
# limits: heap_mb=64
s = "x"
while True:
    s += s
