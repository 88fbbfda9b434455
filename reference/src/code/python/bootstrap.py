# The dsh-tools Python code-runtime bootstrap, run as `python3 -I -c <launcher> <this file>` in a fresh
# process per run, or as `... <this file> --zygote`: a fork server that forks one such fresh process per
# run, each starting at `_main()` with this module already imported (see `_zygote`). `contain.py` is
# prepended to it: with `--contain <seccomp programs>` (and the Landlock ruleset as fd 4) each run confines
# itself before `boot-ack` (`boundary.rs`). It speaks the frame
# vocabulary of upstream's dsh-code-runtime-python py/protocol.py as JSON lines on fd 3: it reads `boot`
# (applies RLIMIT_CPU / RLIMIT_AS), answers `boot-ack`, reads `run`, executes the program as the body of
# `async def __dsh_main__()`, bridges `await tools.name(args)` as `call` / `reply` frames, streams captured
# output as `log` frames, and ends with one `done` frame.
# While a binding call is the only thing the program's loop waits for, the reply is awaited in the loop's
# own selector from the call itself (`_wait_alone`), saving the loop's callback round per call.
# A `boot` frame with `"persistent": true` keeps the process for its owner's next run (seed 002's
# persistent-in-memory mode): after `done` it waits for the next `boot` / `run` pair, and each program runs
# with its top-level names declared `global`, so its assignments, functions, classes and imports stay in
# the one globals dict the runs share.
# The host trusts nothing this process writes; this side trusts the host's replies.
import ast
import asyncio
import builtins
import io
import json
import linecache
import math
import os
import resource
import sys
import threading
import traceback
import types

_FD = 3
_BOOT_FILE = "<dsh-bootstrap>"
_PROGRAM_FILE = "<program>"
# Exit status meaning "the program exhausted the heap cap" (an uncaught MemoryError); the host reports it as
# worker-exit, like the TypeScript backend's heap limit.
_EXIT_HEAP = 86
# Exit status when the host closed the channel (it settled the run and kills the group anyway).
_EXIT_HOST_GONE = 87
_EXACT = 2 ** 53
_LEAVE = object()
_MISSING = object()
_encode_str = json.encoder.encode_basestring  # JSON.stringify escaping for strings without lone surrogates
# One encoder for every binding call: `json.dumps` with options builds a new encoder per call.
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)
_orig_print = builtins.print
# The names table the fork server holds (`_load_table`): {table id: {name: None}}, at most one, inherited by
# every child forked after it arrived; a boot frame's namespace refers to it by `namesTable` instead of
# listing its names. A child keeps the one its first boot refers to and drops any other before the program
# arrives, so a program sees no names but its own.
_TABLES = {}
_real_stdout = sys.stdout
_real_stderr = sys.stderr


def _marker(max_bytes):
    return f"[dsh-code-runtime-python] log capture truncated at {max_bytes} bytes"


# ---------------------------------------------------------------------------------------------- channel

_inbox = bytearray()
# The one read buffer of this process, reused for every read: a fresh 1 MiB `bytes` per read made glibc map,
# shrink and unmap a block for every reply (three system calls and a page fault per binding call). The zygote
# never reads into it, so a forked child starts from zeros and its writes stay in its own copy of the pages.
_READ_SIZE = 1 << 20  # only the pages a read fills are ever touched
_chunk = bytearray(_READ_SIZE)
_chunk_view = memoryview(_chunk)


def _read_into_inbox():
    """One read of fd 3 appended to `_inbox`: the byte count (0 at EOF); raises what `os.readv` raises."""
    n = os.readv(_FD, [_chunk])
    _inbox.extend(_chunk_view[:n])
    return n


_write_lock = threading.Lock()
_get_running_loop = asyncio.get_running_loop


def _write(chunks):
    """One whole frame, given as byte chunks (a 64 MiB log is not copied into one buffer first): a lock keeps
    frames from threads (a `print` in a thread) from interleaving."""
    with _write_lock:
        try:
            written = os.writev(_FD, chunks)
            if written < sum(map(len, chunks)):
                rest = memoryview(b"".join(chunks))[written:]
                while rest:
                    rest = rest[os.write(_FD, rest):]
        except OSError:
            os._exit(_EXIT_HOST_GONE)


def _send(*parts):
    """One frame made of `parts` (strings), newline-terminated. A lone surrogate, which no frame should hold,
    becomes U+FFFD."""
    chunks = []
    for part in parts:
        try:
            chunks.append(part.encode("utf-8"))
        except UnicodeEncodeError:
            chunks.append(part.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8"))
    chunks.append(b"\n")
    _write(chunks)


def _send_text(text):
    _send(text)


def _read_frame_blocking():
    while True:
        end = _inbox.find(b"\n")
        if end >= 0:
            line = bytes(_inbox[:end])
            del _inbox[: end + 1]
            return json.loads(line)
        if not _read_into_inbox():
            os._exit(_EXIT_HOST_GONE)


# ---------------------------------------------------------------------------------------- lossless JSON


def _lossless(root):
    """Whether `root` is lossless JSON: None, bool, str, int a double holds exactly, finite float other
    than -0.0, list, dict with str keys; no cycles (repeated references are fine). Exact types only."""
    stack = [root]
    path = set()
    while stack:
        value = stack.pop()
        if value is _LEAVE:
            path.discard(stack.pop())
            continue
        kind = type(value)
        if value is None or kind is bool or kind is str:
            continue
        if kind is int:
            if -_EXACT <= value <= _EXACT:
                continue
            try:
                if int(float(value)) != value:
                    return False
            except OverflowError:
                return False
            continue
        if kind is float:
            if not math.isfinite(value) or (value == 0.0 and math.copysign(1.0, value) < 0):
                return False
            continue
        if kind is list or kind is dict:
            key = id(value)
            if key in path:
                return False
            path.add(key)
            stack.append(key)
            stack.append(_LEAVE)
            if kind is list:
                stack.extend(value)
            else:
                for name in value:
                    if type(name) is not str:
                        return False
                stack.extend(value.values())
            continue
        return False
    return True


def _scalar_json(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is str:
        return _encode_str(value)
    if type(value) is float and value.is_integer() and abs(value) <= _EXACT:
        return str(int(value))
    return repr(value)


def _dumps_deep(root):
    """Compact JSON without recursion (values too deep for the C encoder)."""
    out = []
    stack = [root]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is tuple:
            out.append(value[0])
        elif kind is list:
            out.append("[")
            stack.append(("]",))
            for index in range(len(value) - 1, -1, -1):
                stack.append(value[index])
                if index:
                    stack.append((",",))
        elif kind is dict:
            out.append("{")
            stack.append(("}",))
            items = list(value.items())
            for index in range(len(items) - 1, -1, -1):
                name, item = items[index]
                stack.append(item)
                stack.append((_encode_str(name) + ":",))
                if index:
                    stack.append((",",))
        else:
            out.append(_scalar_json(value))
    return "".join(out)


def _to_json(value):
    """Compact JSON text of a lossless value, or None when it is not lossless (a lone surrogate included)."""
    if not _lossless(value):
        return None
    try:
        text = _encoder.encode(value)
    except RecursionError:
        text = _dumps_deep(value)
    except (ValueError, TypeError):
        return None
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return text


def _loads_deep(text):
    """json.loads without recursion (replies too deep for the C decoder)."""
    decoder = json.JSONDecoder()
    scan = decoder.scan_once
    ws = " \t\n\r"
    index = 0
    containers = []  # (container, pending key or None)
    root = _MISSING

    def skip(i):
        while i < len(text) and text[i] in ws:
            i += 1
        return i

    while True:
        index = skip(index)
        char = text[index]
        if char == "[":
            index = skip(index + 1)
            if text[index] == "]":
                value = []
                index += 1
            else:
                containers.append(([], None))
                continue
        elif char == "{":
            index = skip(index + 1)
            if text[index] == "}":
                value = {}
                index += 1
            else:
                name, index = scan(text, index)
                index = skip(index)
                index += 1  # ':'
                containers.append(({}, name))
                continue
        else:
            value, index = scan(text, index)
        while True:
            if not containers:
                return value
            container, name = containers[-1]
            if type(container) is list:
                container.append(value)
            else:
                container[name] = value
            index = skip(index)
            char = text[index]
            index += 1
            if char == ",":
                if type(container) is dict:
                    index = skip(index)
                    name, index = scan(text, index)
                    index = skip(index)
                    index += 1  # ':'
                    containers[-1] = (container, name)
                break
            containers.pop()
            value = container


def _loads(line):
    try:
        return json.loads(line)
    except RecursionError:
        return _loads_deep(line.decode("utf-8"))


# --------------------------------------------------------------------------------------------- logging


class _Ledger:
    """The child's half of the combined output ledger: stops capture once the logs cannot fit."""

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.bytes = 2
        self.entries = 0
        self.truncated = False
        self.lock = threading.Lock()

    def remaining(self):
        return self.max_bytes - self.bytes

    def push(self, text):
        if type(text) is not str:
            text = str(text)
        with self.lock:
            self._push(text)

    def _push(self, text):
        if self.truncated:
            return
        if not text.isascii():  # O(1): an ASCII string holds no lone surrogate
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        separator = 1 if self.entries else 0
        available = self.max_bytes - self.bytes - separator
        # Escaped once, and the escaped text is both measured and sent (a log may be 64 MiB).
        encoded = _encode_str(text) if len(text) <= available else None
        size = _utf8_len(encoded) if encoded is not None else available + 1
        if size <= available:
            self.bytes += size + separator
            self.entries += 1
            _send('{"type":"log","text":', encoded, "}")
            return
        self.truncated = True
        prefix = _fitting_prefix(text, available)
        if prefix:
            self.bytes += _json_bytes(prefix) + separator
            self.entries += 1
            _send_text('{"type":"log","text":' + _encode_str(prefix) + "}")
        _send_text('{"type":"log","text":' + _encode_str(_marker(self.max_bytes)) + ',"truncated":true}')


def _utf8_len(text):
    """UTF-8 bytes of a string without lone surrogates (no copy for an ASCII one)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _json_bytes(text):
    return _utf8_len(_encode_str(text))


def _fitting_prefix(text, available):
    """The longest prefix whose JSON string encoding fits `available` bytes."""
    low, high = 0, min(len(text), max(available - 2, 0))
    while low < high:
        middle = (low + high + 1) // 2
        if _json_bytes(text[:middle]) <= available:
            low = middle
        else:
            high = middle - 1
    return text[:low]


_ledger = None


class _Capture(io.TextIOBase):
    """sys.stdout / sys.stderr: every write is one log entry."""

    def __init__(self, fd):
        self._fd = fd

    def write(self, text):
        if type(text) is not str:
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            _ledger.push(text)
        return len(text)

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def flush(self):
        pass

    @property
    def encoding(self):
        return "utf-8"

    @property
    def buffer(self):
        return (_real_stdout if self._fd == 1 else _real_stderr).buffer


def _print(*values, sep=" ", end="\n", file=None, flush=False):
    """print(): one log entry per call (a single trailing newline is not part of the entry)."""
    if file is not None and file is not sys.stdout and file is not sys.stderr:
        return _orig_print(*values, sep=sep, end=end, file=file, flush=flush)
    target = sys.stdout if file is None else file
    if not isinstance(target, _Capture):
        return _orig_print(*values, sep=sep, end=end, file=file, flush=flush)
    if sep is None:
        sep = " "
    if end is None:
        end = "\n"
    if type(sep) is not str:
        raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
    if type(end) is not str:
        raise TypeError(f"end must be None or a string, not {type(end).__name__}")
    if end == "\n":
        # The same entry as joining, appending `end` and dropping that newline, without two copies of it
        # (a single string value is pushed as it is).
        text = sep.join([str(value) for value in values])
    else:
        text = sep.join([str(value) for value in values]) + end
        if text.endswith("\n"):
            text = text[:-1]
    _ledger.push(text)


# -------------------------------------------------------------------------------------------- bindings

_pending = {}
_next_id = [1]
_frame_cap = 0


def _make_error_class(name, member):
    def __init__(self, member_name, message):
        Exception.__init__(self, message)
        setattr(self, member, member_name)

    return type(name, (Exception,), {"__init__": __init__, "__module__": "builtins", "__qualname__": name})


def _make_binding(global_name, name, error_class):
    def fail(message):
        if error_class is None:
            return Exception(message)
        return error_class(name, message)

    # Everything of the call frame after the id and before the arguments, escaped once.
    middle = ',"global":' + _encode_str(global_name) + ',"name":' + _encode_str(name) + ',"args":'

    async def binding(args=_MISSING, /):
        text = None if args is _MISSING else _to_json(args)
        if text is None:
            raise fail("binding arguments must be lossless JSON")
        if len(text) * 3 > _frame_cap and len(text.encode("utf-8")) > _frame_cap:
            raise fail(f"binding arguments exceed the {_frame_cap}-byte frame limit")
        call_id = _next_id[0]
        _next_id[0] += 1
        future = _get_running_loop().create_future()
        _pending[call_id] = future
        _send_text('{"type":"call","id":' + str(call_id) + middle + text + "}")
        _wait_alone(future)
        try:
            ok, payload = await future
        finally:
            _pending.pop(call_id, None)
        if not ok:
            raise fail(payload)
        return payload

    binding.__name__ = name
    binding.__qualname__ = f"{global_name}.{name}"
    return binding


def _wait_alone(future):
    """Wait for a binding's reply here when the loop has nothing else to run first (no ready callback, no
    timer): do what its next turn would — block in its selector over every descriptor registered — and
    serve fd 3 as its reader would, without the loop's callback and task-wake-up round per reply (a third of
    a sequential binding call's cost). Readiness of any other descriptor, or another task made ready by a
    reply, hands back to the loop at once; so does a loop without the attributes this reads. When replies
    that arrive together resolve another task's call before this one's, this call's reply is left to the
    loop behind that task's wake-up, so tasks resume in reply order, as through the loop."""
    loop = _get_running_loop()
    try:
        ready, scheduled, select = loop._ready, loop._scheduled, loop._selector.select
    except AttributeError:
        return
    while not future.done() and not ready and not scheduled:
        events = select(None)
        if any(key.fd != _FD for key, _ in events):
            return
        if events and _read_some() and _dispatch_replies(future, ready):
            loop.call_soon(_dispatch_replies)
            return


def _make_namespace(global_name, members, error_class):
    """The namespace object over `members` (name -> binding, or None for one not made yet): a binding is
    made the first time its name is read, and kept, so a run's set-up does not grow with the number of
    names."""

    def member(key):
        binding = members[key]
        if binding is None:
            binding = members[key] = _make_binding(global_name, key, error_class)
        return binding

    def __getattr__(self, key):
        try:
            return member(key)
        except KeyError:
            raise AttributeError(f"{global_name!r} object has no attribute {key!r}") from None

    def __getitem__(self, key):
        try:
            return member(key)
        except (KeyError, TypeError):
            raise KeyError(key) from None

    def __contains__(self, key):
        return key in members

    def __dir__(self):
        return list(members)

    def __iter__(self):
        return iter(list(members))

    def __len__(self):
        return len(members)

    def __repr__(self):
        return f"<bindings {global_name}: {', '.join(members)}>"

    cls = type(
        global_name,
        (),
        {
            "__slots__": (),
            "__getattr__": __getattr__,
            "__getitem__": __getitem__,
            "__contains__": __contains__,
            "__dir__": __dir__,
            "__iter__": __iter__,
            "__len__": __len__,
            "__repr__": __repr__,
            "__module__": "builtins",
        },
    )
    return cls()


def _on_readable():
    # One read per wake-up: fd 3 is a blocking socket, so a second read could wait for bytes the host will
    # only send once the program goes on. The loop calls again while more is waiting.
    if _read_some():
        _dispatch_replies()


def _read_some():
    """One read of fd 3 into the inbox: False when nothing was there; ends the process at EOF."""
    try:
        n = _read_into_inbox()
    except BlockingIOError:
        return False
    except OSError:
        os._exit(_EXIT_HOST_GONE)
    if not n:
        os._exit(_EXIT_HOST_GONE)
    return True


def _dispatch_replies(own=None, ready=None):
    """Resolve the binding future of every whole reply in the inbox, in order. Given `own` (a waiting
    binding's future) and the loop's ready queue: stop at `own`'s reply when a task was already made ready
    before it, leaving that reply and the rest in the inbox, and return True (its task must resume after
    those, as the loop would order it)."""
    while True:
        end = _inbox.find(b"\n")
        if end < 0:
            return False
        frame = _loads(bytes(_inbox[:end]))
        if frame.get("type") != "reply":
            del _inbox[: end + 1]
            continue
        future = _pending.get(frame.get("id"))
        if own is not None and ready and future is own:
            return True
        del _inbox[: end + 1]
        _pending.pop(frame.get("id"), None)
        if future is None or future.done():
            continue
        if frame.get("ok") is True:
            future.set_result((True, frame.get("value")))
        else:
            future.set_result((False, frame.get("message")))


# ----------------------------------------------------------------------------------------- the program


def _strip_bootstrap_frames(tb):
    """Drop the bootstrap's frames, and the event-loop frames above the program's outermost one."""
    kept = []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename != _BOOT_FILE:
            kept.append(tb)
        tb = tb.tb_next
    for index, entry in enumerate(kept):
        if entry.tb_frame.f_code.co_filename == _PROGRAM_FILE:
            del kept[:index]
            break
    rebuilt = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


def _format_exception(error):
    """The text CPython prints for an uncaught exception, without the bootstrap's frames."""
    try:
        seen = set()
        todo = [error]
        while todo:
            current = todo.pop()
            if current is None or id(current) in seen:
                continue
            seen.add(id(current))
            current.__traceback__ = _strip_bootstrap_frames(current.__traceback__)
            todo.append(current.__cause__)
            todo.append(current.__context__)
        return "".join(traceback.format_exception(error)).rstrip("\n")
    except MemoryError:
        raise
    except BaseException:
        return "program raised an unrenderable exception"


class _Bound(ast.NodeVisitor):
    """The names a program binds at its own top level (a nested function, class, lambda or comprehension
    is a scope of its own: only its name counts)."""

    def __init__(self):
        self.names = []

    def add(self, name):
        if name not in self.names:
            self.names.append(name)

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.add(node.id)

    def visit_FunctionDef(self, node):
        self.add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        pass

    def visit_ListComp(self, node):
        # Only an assignment expression's target escapes a comprehension: it binds in the enclosing scope.
        walrus = _WalrusTargets()
        walrus.generic_visit(node)
        for name in walrus.names:
            self.add(name)

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def visit_Import(self, node):
        for alias in node.names:
            self.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node):
        for alias in node.names:
            if alias.name != "*":
                self.add(alias.asname or alias.name)

    def visit_ExceptHandler(self, node):
        if node.name:
            self.add(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        if node.name:
            self.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name:
            self.add(node.name)

    def visit_MatchMapping(self, node):
        if node.rest:
            self.add(node.rest)
        self.generic_visit(node)


class _WalrusTargets(ast.NodeVisitor):
    """Inside a comprehension (nested ones included): the targets of assignment expressions, which bind
    in the comprehension's enclosing scope. A lambda is a scope of its own."""

    def __init__(self):
        self.names = []

    def visit_NamedExpr(self, node):
        if node.target.id not in self.names:
            self.names.append(node.target.id)
        self.visit(node.value)

    def visit_Lambda(self, node):
        pass


class _Unannotated(ast.NodeTransformer):
    """Persistent mode declares every top-level name `global`, and a global name cannot carry an
    annotation: `x: int = 1` becomes `x = 1` and a bare `x: int` becomes `pass`, as inside the per-call
    wrapper function, where a local's annotation is never evaluated. Nested scopes are left alone."""

    def visit_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            return node
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        target = ast.Name(id=node.target.id, ctx=ast.Store())
        return ast.copy_location(ast.Assign(targets=[ast.copy_location(target, node.target)], value=node.value), node)

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef


def _compile(program, program_globals, persistent=False):
    linecache.cache[_PROGRAM_FILE] = (len(program), None, program.splitlines(True), _PROGRAM_FILE)
    tree = ast.parse(program, filename=_PROGRAM_FILE, mode="exec")
    wrapper = ast.parse("async def __dsh_main__():\n    pass\n", filename=_PROGRAM_FILE)
    # `from __future__` imports must open a module: they stay there, ahead of the wrapper.
    futures = []
    while tree.body and isinstance(tree.body[0], ast.ImportFrom) and tree.body[0].module == "__future__":
        futures.append(tree.body.pop(0))
    if tree.body:
        wrapper.body[0].body = tree.body
    if persistent:
        tree = ast.fix_missing_locations(_Unannotated().visit(tree))
        wrapper.body[0].body = tree.body or wrapper.body[0].body
        bound = _Bound()
        for statement in tree.body:
            bound.visit(statement)
        if bound.names:
            declaration = ast.Global(names=bound.names, lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)
            wrapper.body[0].body = [declaration] + wrapper.body[0].body
    wrapper.body[0:0] = futures
    module = compile(wrapper, _PROGRAM_FILE, "exec", dont_inherit=True)
    exec(module, program_globals)
    main = program_globals.pop("__dsh_main__")
    if main.__code__.co_flags & 0x200:  # CO_ASYNC_GENERATOR: a top-level `yield`
        raise SyntaxError("'yield' outside function", (_PROGRAM_FILE, 1, 1, program.split("\n", 1)[0]))
    try:
        main.__code__ = main.__code__.replace(co_name="<module>", co_qualname="<module>")
    except TypeError:
        main.__code__ = main.__code__.replace(co_name="<module>")
    return main


def _flush_real_streams():
    for stream in (_real_stdout, _real_stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def _done(value=_MISSING, error=None):
    _flush_real_streams()
    if error is not None:
        kind, message = error
        if _json_bytes(message) > _ledger.remaining():
            kind, message = "output-limit", f"outer output exceeded {_ledger.max_bytes} bytes"
        _send_text('{"type":"done","error":{"kind":%s,"message":%s}}' % (_encode_str(kind), _encode_str(message)))
    elif value is _MISSING:
        _send_text('{"type":"done"}')
    else:
        _send('{"type":"done","value":', value, "}")


def _finish(result):
    if result is None:
        return _done()
    text = _to_json(result)
    if text is None:
        return _done(error=("invalid-output", "program completion must be lossless JSON"))
    # A Python spelling is at most ~3x the JavaScript one the host meters (`1.0` vs `1`): beyond that the
    # value cannot fit, and the frame would pass the host's size cap.
    if len(text) > 3 * max(_ledger.remaining(), 0) + 16:
        return _done(error=("output-limit", f"outer output exceeded {_ledger.max_bytes} bytes"))
    return _done(value=text)


def _exit_like_python(error):
    """`sys.exit()` ends the process as it would end a script (the TypeScript analog, `process.exit()`,
    ends the worker): the status is the code, or 1 after printing a non-integer code to the real stderr."""
    code = error.code
    if code is None:
        status = 0
    elif type(code) is int:
        status = code & 0xFF
    else:
        try:
            os.write(2, (str(code) + "\n").encode("utf-8", "replace"))
        except BaseException:
            pass
        status = 1
    _flush_real_streams()
    os._exit(status)


def _boot(boot, program_globals, first):
    """Apply one `boot` frame: the CPU budget from now, the heap cap (first boot only: it covers the
    process's whole life), a fresh ledger, the namespaces as globals."""
    global _ledger, _frame_cap
    persistent = boot.get("persistent") is True
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_soft = int(math.ceil(usage.ru_utime + usage.ru_stime)) + int(boot["cpuSeconds"])
    try:
        _, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
        if persistent:
            # The hard limit stays where it is, so the next run can move the soft one again.
            if cpu_hard == resource.RLIM_INFINITY or cpu_hard > cpu_soft:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu_soft, cpu_hard))
        elif cpu_hard == resource.RLIM_INFINITY or cpu_hard > cpu_soft + 1:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_soft, cpu_soft + 1))
    except (ValueError, OSError):
        pass
    if first:
        try:
            with open("/proc/self/statm") as statm:
                mapped = int(statm.read().split()[0]) * resource.getpagesize()
            cap = mapped + int(boot["addressSpaceBytes"])
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        except (ValueError, OSError):
            pass
    _ledger = _Ledger(int(boot["maxLogBytes"]))
    _frame_cap = max(4 * int(boot["maxValueBytes"]), 64 << 20) + (1 << 20) - (64 << 10)
    _pending.clear()
    kept = None
    for namespace in boot["namespaces"]:
        error = namespace.get("errorClass")
        error_class = None
        if error is not None:
            error_class = _make_error_class(error["name"], error["memberNameProperty"])
            program_globals[error["name"]] = error_class
        table = namespace.get("namesTable")
        if table is None:
            members = dict.fromkeys(namespace["names"])
        else:
            inherited = _TABLES.get(table)
            if inherited is None or len(inherited) != namespace["namesCount"]:
                os._exit(_EXIT_HOST_GONE)  # the host refers only to the table this process inherited
            # A persistent process keeps the table pristine for its later boots (their bindings are new).
            members = inherited.copy() if persistent else inherited
            kept = table
        program_globals[namespace["global"]] = _make_namespace(namespace["global"], members, error_class)
    if first:
        for table in [table for table in _TABLES if table != kept]:
            del _TABLES[table]
    return persistent


def _cancel_leftovers(loop):
    """Tasks the program started and left running do not outlive its run (a persistent process keeps its
    loop for the next one)."""
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=0.25))


def _run_one(run, program_globals, loop, persistent):
    """Compile and run one program, ending with its `done` frame."""
    try:
        main = _compile(run["program"], program_globals, persistent)
    except MemoryError:
        os._exit(_EXIT_HEAP)
    except BaseException as error:  # SyntaxError and friends: no frames, as CPython prints them for a script
        error.__traceback__ = None
        error.__context__ = None
        return _done(error=("exception", _format_exception(error)))
    try:
        result = loop.run_until_complete(main())
    except MemoryError:
        os._exit(_EXIT_HEAP)
    except SystemExit as error:
        _exit_like_python(error)
    except BaseException as error:
        if persistent:
            _cancel_leftovers(loop)
        return _done(error=("exception", _format_exception(error)))
    if persistent:
        _cancel_leftovers(loop)
    _finish(result)


def _read_expected(kind):
    """The next frame, which must be `kind`; a late `reply` (to a call of a run that already ended) is
    skipped."""
    frame = _read_frame_blocking()
    while frame.get("type") == "reply":
        frame = _read_frame_blocking()
    if frame.get("type") != kind:
        os._exit(_EXIT_HOST_GONE)
    return frame


def _main(loop=None):
    """Serve this process's run (and, when persistent, its owner's next ones) on `loop` (a new one when
    none was made ahead)."""
    program_globals = {"__name__": "__main__", "__doc__": None, "__builtins__": builtins}
    persistent = _boot(_read_expected("boot"), program_globals, True)
    _contain()  # contain.py: before boot-ack, so the program arrives only once the boundary holds
    _send_text('{"type":"boot-ack"}')
    run = _read_expected("run")

    sys.stdout = _Capture(1)
    sys.stderr = _Capture(2)
    builtins.print = _print
    if loop is None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    loop.add_reader(_FD, _on_readable)
    while True:
        _run_one(run, program_globals, loop, persistent)
        if not persistent:
            return
        # The owner's next run: a fresh boot (budgets, ledger, namespaces), then its program.
        _boot(_read_expected("boot"), program_globals, False)
        _send_text('{"type":"boot-ack"}')
        run = _read_expected("run")


# ---------------------------------------------------------------------------------------- fork server


def _zygote():
    """The fork server (`zygote.rs`): fd 3 is a control socket to the host. This process never runs a
    program. Each request is one byte with three descriptors attached (SCM_RIGHTS): the run's protocol
    channel, its stdout and its stderr. It serves each request with one fresh child, the leader of its own
    process group before `P <pid>` answers, and reports each child's raw wait status as `X <pid> <status>`
    once reaped. EOF on the control socket (the host dropped the runtime, or died) ends it.

    The child is the spare when there is one: a child forked ahead, while no request was waiting, that has
    made its event loop and waits for its run's descriptors; it has run nothing. Otherwise the child is
    forked on the spot. A new spare is forked once no request is waiting. (A spare that also compiled and
    ran a throwaway program measured slower: its warm-up competed with the run in progress for the CPUs.)"""
    import select
    import signal
    import socket

    control = socket.socket(fileno=_FD)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)

    zygote = os.getpid()  # children check it is still their parent once they asked to die with it
    spare = None  # (pid, socket): the spare and the zygote's end of its channel
    spare_failed = False  # the last spare could not be forked: try again after the next request

    def reap():
        nonlocal spare
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if spare is not None and spare[0] == pid:
                spare[1].close()
                spare = None
            control.sendall(b"X %d %d\n" % (pid, status))

    while True:
        try:
            idle = spare is None and not spare_failed
            ready, _, _ = select.select([control, wake_r], [], [], 0 if idle else None)
        except InterruptedError:
            continue
        if not ready:
            spare = _fork_spare(control, zygote)
            spare_failed = spare is None
            continue
        if wake_r in ready:
            try:
                while os.read(wake_r, 4096):
                    pass
            except BlockingIOError:
                pass
            reap()
        if control not in ready:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, 1, 3)
        except OSError:
            os._exit(0)
        if not message:
            os._exit(0)
        if message == b"T":
            for fd in fds:
                os.close(fd)
            _load_table(control)
            if spare is not None:  # forked without the table: the next request forks afresh
                os.kill(spare[0], signal.SIGKILL)  # reaped (and reported) like any child
                spare[1].close()
                spare = None
            continue
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            control.sendall(b"E bad request\n")
            continue
        spare_failed = False
        if spare is not None:
            pid, channel = spare
            spare = None
            try:
                socket.send_fds(channel, [b"R"], fds)
                handed = True
            except OSError:
                handed = False
            channel.close()
            if handed:
                for fd in fds:
                    os.close(fd)
                control.sendall(b"P %d\n" % pid)
                continue
            try:
                os.kill(pid, signal.SIGKILL)  # unreachable: it is reaped (and reported) like any child
            except OSError:
                pass
        try:
            pid = os.fork()
        except OSError as error:
            for fd in fds:
                os.close(fd)
            control.sendall(b"E %s\n" % str(error).replace("\n", " ").encode("utf-8", "replace"))
            continue
        if pid == 0:
            _forked_child(control, fds, zygote)
        try:
            # Also in the child: whichever runs first, the group exists before the host learns the pid.
            os.setpgid(pid, pid)
        except OSError:
            pass
        for fd in fds:
            os.close(fd)
        control.sendall(b"P %d\n" % pid)


def _recv_exact(control, size):
    """`size` bytes from the control socket (EOF: the host is gone, and so is the fork server)."""
    data = bytearray(size)
    view = memoryview(data)
    got = 0
    while got < size:
        try:
            n = control.recv_into(view[got:])
        except OSError:
            os._exit(0)
        if n == 0:
            os._exit(0)
        got += n
    return data


def _load_table(control):
    """A `T` request: an 8-byte table id and an 8-byte length (little-endian), then the names as a JSON
    array of that many bytes. It replaces the table held (`_TABLES`): parsed here once, inherited by every
    child forked from now on."""
    header = _recv_exact(control, 16)
    table = int.from_bytes(header[:8], "little")
    size = int.from_bytes(header[8:], "little")
    _TABLES.clear()
    _TABLES[table] = dict.fromkeys(json.loads(_recv_exact(control, size)))


def _forked_child(control, fds, zygote):
    """A forked child becomes what a fresh `python3 -I` would be before `_main()`: its own process group,
    default SIGCHLD, stdin the zygote's /dev/null, stdout / stderr / fd 3 the run's, no other descriptor
    (but the ruleset, fd 4, when contained); it dies with the zygote."""
    import signal

    _die_with_parent(zygote)
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        control.detach()  # fd 3 is about to become the run's channel; the socket object must not close it
        channel, out, err = fds
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.dup2(channel, _FD)
        _close_above(_FD + 1, _keep_fds())
        # The loop now, as the spare makes it: the same descriptor layout whichever way a run started.
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    except BaseException:
        os._exit(_EXIT_HOST_GONE)
    _start(loop)


def _fork_spare(control, zygote):
    """Fork the spare (see `_zygote`): its pid and the zygote's end of its channel, or None when it cannot
    be forked."""
    import socket

    try:
        ours, theirs = socket.socketpair()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        ours.close()
        theirs.close()
        return None
    if pid == 0:
        ours.close()
        _spare_child(control, theirs, zygote)
    try:
        os.setpgid(pid, pid)  # also in the child, as for any child
    except OSError:
        pass
    theirs.close()
    return pid, ours


def _spare_child(control, channel, zygote):
    """The spare: own process group, default SIGCHLD, no descriptor of the zygote's but its channel (fd 3,
    the control socket, is closed at once, so the host sees EOF when the zygote dies); make the event loop;
    then wait for the run's descriptors and go on as any forked child. EOF on the channel (the zygote
    ended) ends it."""
    import signal
    import socket

    _die_with_parent(zygote)
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        control.detach()
        _close_above(_FD, (channel.fileno(), *_keep_fds()))
        os.dup2(0, _FD)  # hold fd 3 (for the run's channel) so the loop's descriptors land elsewhere
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    except BaseException:
        os._exit(_EXIT_HOST_GONE)
    try:
        message, fds, _, _ = socket.recv_fds(channel, 1, 3)
    except BaseException:
        os._exit(_EXIT_HOST_GONE)
    if not message or len(fds) != 3:
        os._exit(_EXIT_HOST_GONE)
    try:
        channel.close()
        run_channel, out, err = fds
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.dup2(run_channel, _FD)
        for fd in fds:
            os.close(fd)
    except BaseException:
        os._exit(_EXIT_HOST_GONE)
    _start(loop)


def _start(loop=None):
    try:
        _main(loop)
    except MemoryError:
        os._exit(_EXIT_HEAP)
    os._exit(0)


if _parse_arguments(sys.argv):
    _zygote()
_start()
