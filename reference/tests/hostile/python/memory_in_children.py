# hostile: 16 children each holding 64 MB, past a per-process heap cap
# expect: exception: PermissionError
# limits: heap_mb=64
import os
held = []
for _ in range(16):
    if os.fork() == 0:
        block = bytearray(64 << 20)
        import time
        time.sleep(1000)
return "held"
