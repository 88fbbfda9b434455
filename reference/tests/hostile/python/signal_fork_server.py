# hostile: stop the fork server every run is forked from (SIGSTOP to the parent), so later runs hang
# expect: exception: PermissionError
import os, signal
os.kill(os.getppid(), signal.SIGSTOP)
return "stopped the server"
