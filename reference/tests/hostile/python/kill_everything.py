# hostile: SIGKILL every process this user may signal (the host, the server, other runs)
# expect: any
import os, signal
os.kill(-1, signal.SIGKILL)
return "signalled everyone"
