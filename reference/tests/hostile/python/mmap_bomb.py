# hostile: map 2 GiB of anonymous memory
# expect: exception: Cannot allocate memory
# limits: heap_mb=64
import mmap
m = mmap.mmap(-1, 2 << 30)
m[:] = b"x" * len(m)
