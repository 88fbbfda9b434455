# hostile: attach to the fork server with ptrace
# expect: exception: refused
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
if libc.ptrace(ctypes.c_long(PTRACE_ATTACH), ctypes.c_long(os.getppid()), None, None) == 0:
    return "attached"
raise OSError(ctypes.get_errno(), "refused")
