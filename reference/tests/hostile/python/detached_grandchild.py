# hostile: a grandchild in a new session, holding stdout, to outlive the run
# expect: exception: PermissionError
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(1000)
    os._exit(0)
return "detached"
