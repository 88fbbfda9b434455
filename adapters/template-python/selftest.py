#!/usr/bin/env python3
"""Protocol smoke test of the template adapter's plumbing (what the CI slice of scenarios cannot reach
with the sample registry): gates, `events/waitFor`, `eventsThrough`, the leak report, a 100,000-deep
argument crossing both ways, `-0`, and a `failure` notification from inside a running call.
Exit status 0 when every check holds; each failed check is printed."""

import os
import queue
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jsonjs  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
proc = subprocess.Popen([os.path.join(here, 'run')], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
lines = queue.Queue()
threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout] + [lines.put(None)], daemon=True).start()
problems = []
next_id = 0


def check(ok, what):
    if not ok:
        problems.append(what)
        print('FAILED:', what)


def request(method, **params):
    """Sends one request; returns (result or error, events, failures) seen up to its response."""
    global next_id
    next_id += 1
    proc.stdin.write((jsonjs.dumps({'jsonrpc': '2.0', 'id': next_id, 'method': method, 'params': params}) + '\n').encode())
    proc.stdin.flush()
    events, failures = [], []
    while True:
        line = lines.get(timeout=20)
        if line is None:
            raise SystemExit('the adapter exited')
        message = jsonjs.loads(line.decode())
        if message.get('method') == 'event':
            events.append(message['params'])
        elif message.get('method') == 'failure':
            failures.append(message['params'])
            return None, events, failures
        elif message.get('id') == next_id:
            return message.get('result', message.get('error')), events, failures


init, _, _ = request('initialize', protocolVersion='1.0', suite={'name': 'dsh-conformance', 'version': '0'})
check(init['protocolVersion'] == '1.0', 'initialize answers protocol 1.0')

tools = [{'name': 'slow', 'parameters': {}, 'output': {'schema': {'type': 'string'}, 'render': 'text'},
          'body': [{'emit': 'started'}, {'wait': 'g'}, {'return': 'done'}]}]
request('session/open', session='s1', setup={'tools': tools})
request('call/start', session='s1', callId='c1', name='slow', arguments={})
result, events, _ = request('events/waitFor', session='s1', label='started')
check([e['seq'] for e in events] == [1] and result['eventsThrough'] == 1, 'waitFor answers after the mark, eventsThrough 1')
result, _, _ = request('session/close', session='s1')
check(result['leaks'] == {'pendingCalls': ['c1'], 'unopenedGates': ['g'], 'liveTasks': 1},
      'the leak report names the pending call and the awaited gate: %s' % jsonjs.dumps(result['leaks']))

request('session/open', session='s2', setup={'tools': tools})
request('call/start', session='s2', callId='c1', name='slow', arguments={})
request('events/waitFor', session='s2', label='started')
request('gate/open', session='s2', gate='g')
result, events, _ = request('call/await', session='s2', callId='c1')
check(result['result']['value'] == 'done' and events[-1]['event']['type'] == 'result', 'gate/open lets the call finish')
result, _, _ = request('session/close', session='s2')
check(result['leaks'] == {'pendingCalls': [], 'unopenedGates': [], 'liveTasks': 0}, 'no leaks once the gate opened')

echo = [{'name': 'echo', 'parameters': {}, 'output': {'schema': {'type': 'array'}, 'render': 'json'},
         'body': [{'returnArgument': 'v'}]},
        {'name': 'odd', 'parameters': {}, 'output': {'schema': {'type': 'string'}, 'render': 'text'},
         'body': [{'teleport': True}]}]
request('session/open', session='s3', setup={'tools': echo})
depth = 100000
deep = jsonjs.loads('[' * depth + ']' * depth)
request('call/start', session='s3', callId='c1', name='echo', arguments={'v': deep})
result, _, _ = request('call/await', session='s3', callId='c1')
check(jsonjs.dumps(result['result']['value']) == '[' * depth + ']' * depth, 'a 100,000-deep value crosses both ways')
request('call/start', session='s3', callId='c2', name='echo', arguments={'v': -0.0})
result, _, _ = request('call/await', session='s3', callId='c2')
check(result['result']['content'][0]['text'] == '0', '-0 renders as JSON.stringify does')
request('call/start', session='s3', callId='c3', name='odd', arguments={})
result, _, failures = request('call/await', session='s3', callId='c3')
check(len(failures) == 1 and failures[0]['callId'] == 'c3' and 'teleport' in failures[0]['message'],
      'an unsupported instruction inside a running call is reported as a failure: %s' % failures)

proc.stdin.close()
proc.wait(timeout=10)
print('template selftest: %s' % ('ok' if not problems else '%d problem(s)' % len(problems)))
sys.exit(1 if problems else 0)
