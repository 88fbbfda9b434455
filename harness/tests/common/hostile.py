# A hostile fake adapter for the harness's own tests (harness/tests/hostile_adapter.rs). It speaks the
# protocol correctly unless the session (scenario) id or an environment variable asks it to misbehave:
# the word in the session id picks the fault at session/open or session/close. FAKE_DIR is a directory
# for marker files, so a fault can happen on the first start only.
import json, os, shutil, subprocess, sys, threading, time

D = os.environ.get("FAKE_DIR", ".")
def marker(name):
    """True the first time `name` is asked for (creates the marker)."""
    path = os.path.join(D, name)
    if os.path.exists(path):
        return False
    open(path, "w").close()
    return True
def append(name, text):
    with open(os.path.join(D, name), "a") as f:
        f.write(text + "\n")
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n"); sys.stdout.flush()
def answer(req, result):
    send({"jsonrpc": "2.0", "id": req["id"], "result": result})
def err(text):
    sys.stderr.write(text + "\n"); sys.stderr.flush()
def events(session, first, n, label):
    for start in range(first, first + n, 10000):
        sys.stdout.write("".join(json.dumps({"jsonrpc": "2.0", "method": "event", "params": {"session": session, "seq": seq, "event": {"type": "mark", "label": label}}}) + "\n" for seq in range(start, min(first + n, start + 10000))))
    sys.stdout.flush()
def event(session, seq, label):
    send({"jsonrpc": "2.0", "method": "event", "params": {"session": session, "seq": seq, "event": {"type": "mark", "label": label}}})
CLOSE = {"eventsThrough": 0, "leaks": {"pendingCalls": [], "unopenedGates": [], "liveTasks": 0}}

append("starts", str(os.getpid()))
if os.environ.get("FAKE_SETSID"):
    child = subprocess.Popen(["sleep", "300"], start_new_session=True)
    append("grandchildren", str(child.pid))

for line in sys.stdin:
    req = json.loads(line)
    method, params = req.get("method"), req.get("params") or {}
    s = params.get("session", "")
    if method == "initialize":
        if os.environ.get("FAKE_FIRST_INIT_HANG"):
            err("initialize: still loading the model weights")
            time.sleep(600)
        if os.environ.get("FAKE_BOM"):
            sys.stdout.write("\ufeff")
        if os.environ.get("FAKE_INIT_HANG") and not marker("first-init"):
            err("initialize: waiting for a licence server that never answers")
            time.sleep(600)
        flood = int(os.environ.get("FAKE_FEATURE_FLOOD", "0"))
        features = ["%05d" % i + "f" * 995 for i in range(flood)]
        answer(req, {"protocolVersion": os.environ.get("FAKE_PROTOCOL", "1.0"),
                     "implementation": {"name": os.environ.get("FAKE_NAME", "hostile"), "version": "0.0.1", "language": "python"},
                     "capabilities": {"profiles": ["dsh-tools-0.1"], "features": features, "runtimes": []}})
        if os.environ.get("FAKE_DEAF") and marker("deaf"):
            time.sleep(600)  # stops reading stdin for good
    elif method == "session/open":
        if "orphan" in s:
            # Environment cleared, own session, still holding stdout; then the adapter dies.
            env, setsid, sleep = (shutil.which(n) for n in ("env", "setsid", "sleep"))
            child = subprocess.Popen([env, "-i", setsid, sleep, "300"])
            append("orphans", str(child.pid))
            time.sleep(0.2)
            os._exit(3)
        elif "eventflood" in s:
            events(s, 1, 50000, "flood")
            answer(req, {"eventsThrough": 50000})
        elif "busy" in s:
            # A busy child in the adapter's group, and the adapter itself busy too.
            pid = os.fork()
            if pid == 0:
                while True:
                    pass
            append("busy", str(pid))
            append("busy", str(os.getpid()))
            while True:
                pass
        elif "flood" in s and "stderrflood" not in s:
            chunk = "x" * (1 << 20)
            while True:
                sys.stdout.write(chunk)
        elif "stderrflood" in s:
            end = time.time() + 2
            i = 0
            while time.time() < end:
                sys.stderr.write("".join("\rprogress %d" % (i + k) for k in range(10000)))
                i += 10000
            sys.stderr.write("\rlast words before dying\n"); sys.stderr.flush()
            os._exit(3)
        elif "hangerr" in s:
            err("stuck waiting for the database")
        elif "hang" in s:
            pass
        elif "garbageerr" in s:
            err("about to print garbage")
            sys.stdout.write("this is not a protocol message\n"); sys.stdout.flush()
        elif "unsolicited" in s:
            send({"jsonrpc": "2.0", "id": 999999, "result": {}})
            answer(req, {"eventsThrough": 0})
        elif "through" in s:
            event(s, 1, "early")
            answer(req, {"eventsThrough": 0})
        else:
            answer(req, {"eventsThrough": 0})
    elif method == "call/start":
        answer(req, {"eventsThrough": 0})
    elif method == "call/await":
        big = "x" * (20 << 20) if "bigvalue" in s else "small"
        answer(req, {"eventsThrough": 0, "result": {"isError": False, "value": big, "content": [{"type": "text", "text": "x"}]}})
    elif method == "session/close":
        answer(req, dict(CLOSE, eventsThrough=50000) if "eventflood" in s else CLOSE)
        if "dupclose" in s:
            answer(req, CLOSE)
        if "straystorm" in s:
            events(s, 1, 50000, "stray")
        if "lateevent" in s:
            threading.Timer(0.3, event, (s, 1, "late")).start()
    else:
        send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "unknown method " + str(method)}})
