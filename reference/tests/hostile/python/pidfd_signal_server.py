# hostile: signal the fork server through a pidfd instead of kill()
# expect: exception: PermissionError
import os, signal
fd = os.pidfd_open(os.getppid())
signal.pidfd_send_signal(fd, signal.SIGKILL)
return "killed the server"
