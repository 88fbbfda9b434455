# hostile: flood fd 1 past the output ledger
# expect: output-limit
# limits: wall_ms=20000 compute_ms=20000
import os
chunk = b"x" * 65536
while True:
    os.write(1, chunk)
