# hostile: a hundred thousand small binding calls left pending at once
# expect: worker-exit: memory limit
# limits: heap_mb=64 wall_ms=20000 compute_ms=20000
import asyncio
tasks = []
while True:
    for _ in range(1000):
        tasks.append(asyncio.ensure_future(tools.hang(1)))
    await asyncio.sleep(0)
