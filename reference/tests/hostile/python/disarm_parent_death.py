# hostile: turn off the signal that kills it when the fork server dies
# expect: exception: refused
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0:
    return "disarmed"
raise OSError(ctypes.get_errno(), "refused")
