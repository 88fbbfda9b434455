# hostile: start binding calls without awaiting them, each carrying 1 MiB, so the host holds them all
# expect: worker-exit: memory limit
# limits: heap_mb=256 wall_ms=20000 compute_ms=20000
import asyncio
big = "x" * (1 << 20)
tasks = []
while True:
    tasks.append(asyncio.ensure_future(tools.hang(big)))
    await asyncio.sleep(0)
