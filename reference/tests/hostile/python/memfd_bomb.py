# hostile: memory the address-space cap does not see (a memfd written, never mapped)
# expect: exception: PermissionError
import os
fd = os.memfd_create("bomb")
chunk = b"x" * (1 << 20)
while True:
    os.write(fd, chunk)
