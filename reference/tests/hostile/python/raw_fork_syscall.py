# hostile: fork through a raw clone system call (no CLONE_THREAD), past the os module
# expect: exception: refused
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
SIGCHLD = 17
pid = libc.syscall(ctypes.c_long(56), ctypes.c_long(SIGCHLD), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
if pid == 0:
    while True:
        pass
if pid < 0:
    raise OSError(ctypes.get_errno(), "refused")
return pid
