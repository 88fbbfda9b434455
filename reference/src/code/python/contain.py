# The child side of the boundary (`boundary.rs`), prepended to the bootstrap: the run process confines
# itself after its first `boot` frame (rlimits set) and before `boot-ack`, so no program text arrives before
# the boundary holds. Every run process, contained or not, also asks for SIGKILL when its parent dies.
# Failure to apply any piece is fatal: the process exits with _EXIT_BOUNDARY and says why on fd 2.
import ctypes
import os
import resource

_RULESET_FD = 4
_EXIT_BOUNDARY = 88
# `--contain <hex programs>`: set by the argument parsing at the end of the bootstrap; None is the host
# posture.
_CONTAIN = None
_PR_SET_PDEATHSIG = 1
_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
# landlock_restrict_self: one number on every architecture (syscalls from 424 on share the table).
_SYS_LANDLOCK_RESTRICT_SELF = 446
_CAPABILITY_VERSION_3 = 0x20080522
_libc = ctypes.CDLL(None, use_errno=True)
_ulong = ctypes.c_ulong


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _check(result, what):
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _die_with_parent(parent):
    """SIGKILL when the parent (the fork server, or the host for a direct spawn) dies; if it already
    died, end now."""
    try:
        _check(_libc.prctl(_PR_SET_PDEATHSIG, _ulong(9), _ulong(0), _ulong(0), _ulong(0)), "PR_SET_PDEATHSIG")
    except BaseException:
        os._exit(_EXIT_BOUNDARY)
    if os.getppid() != parent:
        os._exit(_EXIT_BOUNDARY)


def _keep_fds():
    """The descriptors above fd 3 a child keeps while it is not yet contained: the ruleset."""
    return (_RULESET_FD,) if _CONTAIN is not None else ()


def _close_above(low, keep=()):
    """Close every descriptor from `low` up, except those in `keep`."""
    top = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    for fd in sorted(k for k in keep if k >= low):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, top)


def _contain():
    """Apply the boundary: lower rlimits, no_new_privs, the Landlock domain, no capabilities, the seccomp
    programs (last: they refuse some of the calls before them)."""
    if _CONTAIN is None:
        return
    try:
        for limit, value in ((resource.RLIMIT_CORE, 0), (resource.RLIMIT_MEMLOCK, 0), (resource.RLIMIT_NOFILE, 64)):
            soft, hard = resource.getrlimit(limit)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(limit, (value, value))
        _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, _ulong(1), _ulong(0), _ulong(0), _ulong(0)), "PR_SET_NO_NEW_PRIVS")
        _check(_libc.syscall(ctypes.c_long(_SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_long(_RULESET_FD), ctypes.c_long(0)), "landlock_restrict_self")
        os.close(_RULESET_FD)
        header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
        data = (ctypes.c_uint32 * 6)()
        _check(_libc.capset(header, data), "capset")
        for program in _CONTAIN.split(","):
            code = bytes.fromhex(program)
            buffer = ctypes.create_string_buffer(code, len(code))
            fprog = _Fprog(len(code) // 8, ctypes.addressof(buffer))
            _check(_libc.prctl(_PR_SET_SECCOMP, _ulong(_SECCOMP_MODE_FILTER), ctypes.byref(fprog), _ulong(0), _ulong(0)), "seccomp")
    except BaseException as error:
        try:
            os.write(2, f"dsh-code-runtime-python: cannot apply the boundary: {error}\n".encode("utf-8", "replace"))
        except BaseException:
            pass
        os._exit(_EXIT_BOUNDARY)


def _parse_arguments(argv):
    """`[--contain <programs>] [--zygote]` after the bootstrap's own text; removes them from argv and
    answers whether this process is the fork server."""
    global _CONTAIN
    args = argv[1:]
    del argv[1:]
    if "--contain" in args:
        at = args.index("--contain")
        _CONTAIN = args[at + 1]
        del args[at : at + 2]
    return args == ["--zygote"]


