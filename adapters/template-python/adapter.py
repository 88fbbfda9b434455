#!/usr/bin/env python3
"""A template adapter for the dsh-conformance suite (protocol v1, ../../conformance/PROTOCOL.md).

Standard library only. This file is the protocol plumbing, done: the stdin/stdout loop, depth-unlimited
JSON (jsonjs.py), sessions, per-session `seq` and `eventsThrough`, gates, `events/waitFor`, calls with
abort signals, the result observer (`tools/result` -> `result` events, or your own observer's through
`Session.observed_result`), change notifications for
`changes` listeners, the leak report of `session/close`, and `failure` notifications when this
adapter's own code fails inside a running call. What an implementation does lives in registry.py:
replace its marked functions with calls into your implementation.

Run it: adapters/template-python/run (what `dsh-harness --adapter` starts).
"""

import asyncio
import sys
import threading
import traceback

import jsonjs
import registry
from registry import AdapterError, SetupRejected, Unsupported

PROTOCOL_VERSION = '1.0'
# How long session/close lets tasks that are just finishing end before counting them as live.
SETTLE_SECONDS = 0.05


def log(*parts):
    print('[template-python]', *parts, file=sys.stderr, flush=True)


def send(message):
    """The one writer: one line per message, flushed, so events and responses keep their order."""
    sys.stdout.write(jsonjs.dumps(message) + '\n')
    sys.stdout.flush()


class Signal:
    """An abort signal, as JavaScript's AbortSignal: `aborted`, `reason`, and a way to wait for it."""

    def __init__(self):
        self.aborted = False
        self.reason = None
        self._event = asyncio.Event()

    def abort(self, reason):
        if not self.aborted:
            self.aborted, self.reason = True, reason
            self._event.set()

    async def wait(self):
        await self._event.wait()


class Gate:
    def __init__(self):
        self.opened = asyncio.Event()
        self.waiters = 0


class Call:
    """One call/start: what registry.execute gets besides name and arguments."""

    def __init__(self, call_id, signal, root_call_id=None):
        self.id = call_id
        self.signal = signal
        # The caller's `rootCallId` (call/start's param; None: the call is its own root).
        self.root_call_id = root_call_id
        self.done = asyncio.get_running_loop().create_future()


class Session:
    """One scenario's session: what registry.py builds lives in `self.state`."""

    def __init__(self, session_id):
        self.id = session_id
        self.seq = 0
        self.marks = set()
        self.mark_waiters = {}
        self.gates = {}
        self.calls = {}
        self.tasks = set()
        self.change_listeners = []
        self.state = None  # registry.open_session's value

    # -- events --------------------------------------------------------------------------------------
    def emit(self, event):
        """Sends one event; `eventsThrough` of the next response covers it."""
        self.seq += 1
        send({'jsonrpc': '2.0', 'method': 'event', 'params': {'session': self.id, 'seq': self.seq, 'event': event}})
        if event.get('type') == 'mark':
            label = event.get('label')
            self.marks.add(label)
            for future in self.mark_waiters.pop(label, []):
                if not future.done():
                    future.set_result(None)

    def mark(self, label, call_id=None, **extra):
        event = {'type': 'mark', 'label': label}
        if call_id is not None:
            event['callId'] = call_id
        event.update(extra)
        self.emit(event)

    async def wait_for_mark(self, label):
        if label in self.marks:
            return
        future = asyncio.get_running_loop().create_future()
        self.mark_waiters.setdefault(label, []).append(future)
        await future

    # -- gates ---------------------------------------------------------------------------------------
    def gate(self, name):
        return self.gates.setdefault(name, Gate())

    async def wait_gate(self, name, signal=None):
        """Waits until `gate/open` opens the gate; with a signal, until it aborts too. True if opened."""
        gate = self.gate(name)
        gate.waiters += 1
        try:
            if signal is None:
                await gate.opened.wait()
                return True
            opened = asyncio.ensure_future(gate.opened.wait())
            aborted = asyncio.ensure_future(signal.wait())
            await asyncio.wait([opened, aborted], return_when=asyncio.FIRST_COMPLETED)
            for f in (opened, aborted):
                f.cancel()
            return gate.opened.is_set()
        finally:
            gate.waiters -= 1

    # -- tasks and failures --------------------------------------------------------------------------
    def spawn(self, coroutine, call_id=None):
        """Runs `coroutine` as a task of the session (counted in `liveTasks` until it ends). If it raises,
        the harness is told at once with a `failure` notification: the trial is ERROR(adapter) with the
        reason instead of a TIMEOUT."""
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)

        def finished(t):
            self.tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                error = t.exception()
                self.report_failure('%s: %s' % (type(error).__name__, error), call_id)
                log(''.join(traceback.format_exception(type(error), error, error.__traceback__)))

        task.add_done_callback(finished)
        return task

    def report_failure(self, message, call_id=None):
        params = {'session': self.id, 'message': message}
        if call_id is not None:
            params['callId'] = call_id
        send({'jsonrpc': '2.0', 'method': 'failure', 'params': params})

    # -- calls ---------------------------------------------------------------------------------------
    def publish(self, call, result):
        """The result observer: every published result is one `result` event, then `call/await` answers."""
        self.emit({'type': 'result', 'callId': call.id, 'result': result})
        if not call.done.done():
            call.done.set_result(result)

    def observed_result(self, call_id, result):
        """For your own result observer (registry.RESULTS_FROM_OBSERVER): one `result` event, as your
        implementation publishes it — any call, sub-calls included, when and in the order it publishes."""
        self.emit({'type': 'result', 'callId': call_id, 'result': result})

    def settle(self, call, result):
        """`execute` returned: `call/await` answers with `result`; its `result` event is sent here unless
        the implementation's own observer sends it (registry.RESULTS_FROM_OBSERVER)."""
        if registry.RESULTS_FROM_OBSERVER:
            if not call.done.done():
                call.done.set_result(result)
        else:
            self.publish(call, result)

    def changed(self, notification):
        """Tell every `changes` listener (registry.py registers them) of one registry change."""
        for listener in list(self.change_listeners):
            listener(notification)

    async def close(self):
        await asyncio.sleep(SETTLE_SECONDS)
        pending = [c.id for c in self.calls.values() if not c.done.done()]
        gates = sorted(n for n, g in self.gates.items() if g.waiters > 0 and not g.opened.is_set())
        live = len([t for t in self.tasks if not t.done()])
        for task in list(self.tasks):
            task.cancel()
        registry.close_session(self)
        return {'leaks': {'pendingCalls': pending, 'unopenedGates': gates, 'liveTasks': live}}


SESSIONS = {}


def session_of(params):
    sid = params.get('session')
    if sid not in SESSIONS:
        raise AdapterError('no open session %r' % (sid,), -32000)
    return SESSIONS[sid]


async def call_start(session, params):
    call_id = params['callId']
    if call_id in session.calls:
        raise AdapterError('call %r already started' % call_id, -32003)
    signal = Signal()
    if params.get('aborted'):
        signal.abort(params.get('reason'))
    call = Call(call_id, signal, params.get('rootCallId'))
    session.calls[call_id] = call

    async def run():
        result = await registry.execute(session, call, params['name'], params.get('arguments'),
                                        params.get('agent'), params.get('parent'))
        session.settle(call, result)

    session.spawn(run(), call_id)
    return {}


async def call_await(session, params):
    call = session.calls.get(params['callId'])
    if call is None:
        raise AdapterError('no call %r' % params['callId'], -32000)
    return {'result': await call.done}


async def call_abort(session, params):
    call = session.calls.get(params['callId'])
    if call is None:
        raise AdapterError('no call %r' % params['callId'], -32000)
    # `reason` absent: the signal's default reason; `reason: null` is the value null (PROTOCOL.md).
    # registry.abort_call decides what aborts and what runs before this response (its eventsThrough).
    await registry.abort_call(session, call, params['reason'] if 'reason' in params else registry.DEFAULT_ABORT_REASON)
    return {}


async def gate_open(session, params):
    session.gate(params['gate']).opened.set()
    return {}


async def wait_for(session, params):
    await session.wait_for_mark(params['label'])
    return {}


async def session_open(params):
    sid = params['session']
    if sid in SESSIONS:
        raise AdapterError('session %r is already open' % sid, -32003)
    session = Session(sid)
    SESSIONS[sid] = session
    # A rejected open is still followed by session/close: keep the session until then.
    session.state = registry.open_session(session, params.get('setup') or {})
    return {}


async def session_close(session, params):
    SESSIONS.pop(session.id, None)
    return await session.close()


def initialize(params):
    return {
        'protocolVersion': PROTOCOL_VERSION,
        'implementation': registry.IMPLEMENTATION,
        'capabilities': {'profiles': ['dsh-tools-0.1'], 'features': registry.FEATURES, 'runtimes': registry.RUNTIMES},
    }


PLUMBING = {
    'call/start': call_start,
    'call/await': call_await,
    'call/abort': call_abort,
    'gate/open': gate_open,
    'events/waitFor': wait_for,
    'session/close': session_close,
}


async def handle(message):
    rid, method, params = message.get('id'), message.get('method'), message.get('params') or {}

    def fail(code, text):
        send({'jsonrpc': '2.0', 'id': rid, 'error': {'code': code, 'message': text}})

    try:
        if method == 'initialize':
            result = initialize(params)
            send({'jsonrpc': '2.0', 'id': rid, 'result': result})
            return
        if method == 'session/open':
            await session_open(params)
            session = SESSIONS[params['session']]
        else:
            session = session_of(params)
            if method in PLUMBING:
                result = await PLUMBING[method](session, params)
            elif method in registry.METHODS:
                result = registry.METHODS[method](session, params)
                if asyncio.iscoroutine(result):
                    result = await result
            else:
                return fail(-32601, 'unknown method %r' % (method,))
        result = dict(result or {}) if method != 'session/open' else {}
        result['eventsThrough'] = session.seq
        send({'jsonrpc': '2.0', 'id': rid, 'result': result})
    except SetupRejected as e:
        fail(-32001, str(e))
    except Unsupported as e:
        fail(-32002, str(e))
    except AdapterError as e:
        fail(e.code, str(e))
    except Exception as e:  # the adapter's own bug: say what it was, never go silent
        log(traceback.format_exc())
        fail(-32603, 'adapter internal error in %s: %s: %s' % (method, type(e).__name__, e))


async def main():
    loop = asyncio.get_running_loop()
    lines = asyncio.Queue()

    def reader():
        # Binary lines end at b"\n" only (U+2028 may sit unescaped inside JSON strings).
        for raw in sys.stdin.buffer:
            loop.call_soon_threadsafe(lines.put_nowait, raw)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=reader, daemon=True).start()
    in_flight = set()
    while True:
        raw = await lines.get()
        if raw is None:
            break
        text = raw.decode('utf-8', 'surrogateescape').rstrip('\r\n')
        if not text.strip():
            continue
        try:
            message = jsonjs.loads(text)
        except (jsonjs.JsonError, ValueError) as e:
            send({'jsonrpc': '2.0', 'id': None, 'error': {'code': -32700, 'message': 'parse error: %s' % e}})
            continue
        if not isinstance(message, dict) or 'id' not in message:
            continue
        # Requests run as they arrive: call/start answers while its call goes on in a task.
        task = asyncio.ensure_future(handle(message))
        in_flight.add(task)
        task.add_done_callback(in_flight.discard)
    if in_flight:
        await asyncio.wait(in_flight, timeout=1)
    log('stdin closed; exiting')


if __name__ == '__main__':
    sys.setrecursionlimit(10000)
    asyncio.run(main())
