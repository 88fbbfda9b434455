#!/usr/bin/env python3
"""The seams registry.py gives a porter, so adapter.py needs no patch (issue 36), checked in-process
against adapter.py's request handler with its output captured:

- results through the porter's own observer (RESULTS_FROM_OBSERVER): exactly the `result` events the
  observer sends (a sub-call's included, one sent after `execute` returned included), none added by the
  plumbing, and call/await answering with what `execute` returned;
- `rootCallId` reaching `execute` as `call.root_call_id`;
- abort ordering (abort_call): by default what an abort wakes emits before the call/abort response;
  a replaced abort_call is what call/abort runs.

Exit status 0 when every check holds; each failed check is printed."""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adapter  # noqa: E402
import registry  # noqa: E402

problems = []
sent = []
adapter.send = sent.append


def check(ok, what):
    if not ok:
        problems.append(what)
        print('FAILED:', what)


async def request(method, rid, **params):
    """One request through adapter.handle; returns the messages it caused, its response last."""
    start = len(sent)
    await adapter.handle({'jsonrpc': '2.0', 'id': rid, 'method': method, 'params': params})
    return sent[start:]


def results(messages):
    return [m['params']['event'] for m in messages if m.get('method') == 'event' and m['params']['event']['type'] == 'result']


ECHO = {'tools': [{'name': 'echo', 'body': [{'return': 'hi'}], 'output': {'render': 'text'}}]}


async def default_results():
    await request('session/open', 1, session='d', setup=ECHO)
    await request('call/start', 2, session='d', callId='c1', name='echo', arguments={})
    await asyncio.sleep(0.01)
    awaited = await request('call/await', 3, session='d', callId='c1')
    check(awaited[-1]['result']['result']['value'] == 'hi', 'default: call/await answers with the result')
    events = results(sent)
    check([e['callId'] for e in events] == ['c1'], 'default: the plumbing sends one result event: %r' % events)
    await request('session/close', 4, session='d')


async def observer_results():
    sent.clear()
    original = registry.execute
    registry.RESULTS_FROM_OBSERVER = True

    async def execute(session, call, name, arguments, agent, parent):
        # The porter's implementation: a sub-call's result first, then its own, one more after returning.
        session.observed_result('sub-1', {'isError': False, 'value': 'sub'})
        result = await original(session, call, name, arguments, agent, parent)
        session.observed_result(call.id, result)
        asyncio.get_running_loop().call_soon(session.observed_result, 'late-1', {'isError': False, 'value': 'late'})
        return dict(result, meta={'from': 'execute'})

    registry.execute = execute
    try:
        await request('session/open', 1, session='o', setup=ECHO)
        await request('call/start', 2, session='o', callId='c1', name='echo', arguments={})
        await asyncio.sleep(0.01)
        awaited = await request('call/await', 3, session='o', callId='c1')
        check(awaited[-1]['result']['result'].get('meta') == {'from': 'execute'}, 'observer: call/await answers with what execute returned')
        events = results(sent)
        check([e['callId'] for e in events] == ['sub-1', 'c1', 'late-1'], 'observer: exactly the observer\'s result events: %r' % events)
        await request('session/close', 4, session='o')
    finally:
        registry.execute = original
        registry.RESULTS_FROM_OBSERVER = False


async def root_call_id():
    seen = []
    original = registry.execute

    async def execute(session, call, name, arguments, agent, parent):
        seen.append(call.root_call_id)
        return await original(session, call, name, arguments, agent, parent)

    registry.execute = execute
    try:
        await request('session/open', 1, session='r', setup=ECHO)
        await request('call/start', 2, session='r', callId='c1', name='echo', arguments={}, rootCallId='root-9')
        await request('call/start', 3, session='r', callId='c2', name='echo', arguments={})
        await asyncio.sleep(0.01)
        check(seen == ['root-9', None], 'rootCallId reaches execute as call.root_call_id: %r' % seen)
        await request('session/close', 4, session='r')
    finally:
        registry.execute = original


async def abort_ordering():
    sent.clear()
    original_execute, original_abort = registry.execute, registry.abort_call

    async def execute(session, call, name, arguments, agent, parent):
        # An `awaitAbort`-like body: settles with a mark as soon as the signal aborts.
        await call.signal.wait()
        session.mark('saw-abort', call.id)
        return {'isError': True, 'error': {'message': 'aborted'}, 'content': []}

    registry.execute = execute
    try:
        await request('session/open', 1, session='a', setup=ECHO)
        await request('call/start', 2, session='a', callId='c1', name='echo', arguments={})
        await asyncio.sleep(0.01)
        messages = await request('call/abort', 3, session='a', callId='c1')
        labels = [m['params']['event'].get('label') for m in messages if m.get('method') == 'event']
        check('saw-abort' in labels and messages[-1].get('id') == 3, 'abort: what it wakes is sent before the response: %r' % messages)
        check(messages[-1]['result']['eventsThrough'] >= 1, 'abort: eventsThrough covers it')
        await request('session/close', 4, session='a')

        order = []

        async def abort_call(session, call, reason):
            order.append(('abort', call.id, reason))
            call.signal.abort(reason)

        registry.abort_call = abort_call
        await request('session/open', 5, session='b', setup=ECHO)
        await request('call/start', 6, session='b', callId='c1', name='echo', arguments={})
        await request('call/abort', 7, session='b', callId='c1', reason='stop')
        check(order == [('abort', 'c1', 'stop')], 'abort: call/abort runs the registry\'s abort_call: %r' % order)
        await asyncio.sleep(0.01)
        await request('session/close', 8, session='b')
    finally:
        registry.execute, registry.abort_call = original_execute, original_abort


async def main():
    await default_results()
    await observer_results()
    await root_call_id()
    await abort_ordering()


try:
    asyncio.run(asyncio.wait_for(main(), 20))
except Exception as e:  # an AttributeError on a missing seam, a hang: say which
    check(False, 'the seams test stopped: %s: %s' % (type(e).__name__, e))
if problems:
    sys.exit(1)
print('seams_test: all checks hold')
