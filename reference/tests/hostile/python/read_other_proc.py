# hostile: read the fork server's environment and the host's command lines through /proc
# expect: exception: PermissionError
import os
return open(f"/proc/{os.getppid()}/environ", "rb").read().decode("latin-1")
