# hostile: large arguments echoed back again and again, so replies pile up on fd 3 unread
# expect: any
# limits: heap_mb=64 wall_ms=3000
import asyncio
big = "y" * (1 << 20)
for _ in range(200):
    asyncio.ensure_future(tools.echo(big))
while True:
    pass
