# hostile: a System V shared-memory segment, which would outlive the run
# expect: exception: refused
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
if libc.shmget(IPC_PRIVATE, ctypes.c_size_t(64 << 20), IPC_CREAT | 0o600) >= 0:
    return "segment made"
raise OSError(ctypes.get_errno(), "refused")
