#!/usr/bin/env python3
# Smoke test of the adapter over the protocol (run ./setup first): initialize, a session with a defineTool
# tool, a denying preExecute listener, an approval ask through an agent, an unknown tool, invalid arguments,
# a 100,000-deep argument crossing both ways, gates, abort (in-flight and pre-aborted), unknown
# method/instruction errors, session/close leak reports. Checks eventsThrough on every response and
# gap-free per-session seq. Exit status 0 when no problem was found.
import json, subprocess, sys, threading, queue, time
sys.setrecursionlimit(10000)
p = subprocess.Popen([__import__('os').path.join(__import__('os').path.dirname(__import__('os').path.abspath(__file__)), 'run')], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
q = queue.Queue()
def reader():
    for line in p.stdout: q.put(line)
    q.put(None)
threading.Thread(target=reader, daemon=True).start()
def errs():
    for line in p.stderr: sys.stderr.write('  [stderr] ' + line)
threading.Thread(target=errs, daemon=True).start()
nid = 0
problems = []
last_seq = {}
def req(method, **params):
    global nid
    nid += 1
    msg = {'jsonrpc': '2.0', 'id': nid, 'method': method, 'params': params}
    p.stdin.write(json.dumps(msg) + '\n'); p.stdin.flush()
    events = []
    while True:
        line = q.get(timeout=20)
        if line is None: raise SystemExit('adapter exited')
        if len(line) > 300000: m = json.loads(line)  # deep lines: python json is recursive; handle below
        m = json.loads(line)
        if m.get('method') == 'event':
            ev = m['params']; s = ev['session']
            if ev['seq'] != last_seq.get(s, 0) + 1: problems.append(f'seq gap {ev}')
            last_seq[s] = ev['seq']; events.append(ev['event'])
            continue
        if m.get('id') != nid: problems.append(f'unexpected id {m}')
        if 'result' in m and method != 'initialize' and 'eventsThrough' not in m['result']: problems.append(f'no eventsThrough: {method}')
        if 'result' in m and method != 'initialize' and m['result']['eventsThrough'] != last_seq.get(params.get('session'), 0): problems.append(f'eventsThrough mismatch {method}')
        return m, events
def show(tag, r):
    m, ev = r
    out = json.dumps(m.get('result', m.get('error')))
    print(f'{tag}: {out[:400]}')
    for e in ev: print(f'    event {json.dumps(e)[:300]}')
    return m, ev

S = 's1'
show('initialize', req('initialize', protocolVersion='1.0', suite={'name': 'dsh-conformance', 'version': '0.1.0'}))
setup = {
  'agents': ['a1'],
  'approval': {'answer': 'allowed-once', 'do': [{'emit': 'approval-asked'}]},
  'tools': [
    {'name': 'echo', 'parameters': {'text': {'type': 'string', 'required': True}}, 'output': {'schema': {'type': 'string'}, 'render': 'text'},
     'body': [{'emit': 'started'}, {'returnArgument': 'text'}]},
    {'name': 'secret', 'output': {'schema': {'type': 'null'}, 'render': 'json'}},
    {'name': 'slow', 'rawParameters': {'type': 'object'}, 'output': {'schema': {}, 'render': 'json'},
     'body': [{'emit': 'slow-in'}, {'waitOrAbort': 'g1'}, {'emitSignal': 'slow-after'}, {'returnArgument': ''}]},
    {'name': 'deep', 'rawParameters': {'type': 'object'}, 'output': {'schema': {}, 'render': 'text'}, 'body': [{'returnArgument': 'v'}]},
    {'name': 'asky', 'output': {'schema': {'type': 'string'}, 'render': 'text'}, 'body': [{'return': 'approved!'}]},
  ],
  'hooks': {
    'preExecute': [
      {'id': 'deny-secret', 'tools': ['secret'], 'decide': {'deny': 'secret is not allowed'}},
      {'id': 'ask-asky', 'tools': ['asky'], 'decide': {'ask': 'please'}},
    ],
  },
}
show('session/open', req('session/open', session=S, setup=setup))
show('call/start echo', req('call/start', session=S, callId='c1', name='echo', arguments={'text': 'hi'}))
show('call/await echo', req('call/await', session=S, callId='c1'))
show('call/start secret', req('call/start', session=S, callId='c2', name='secret', arguments={}))
show('call/await secret', req('call/await', session=S, callId='c2'))
show('call/start nope', req('call/start', session=S, callId='c3', name='nope', arguments={}))
show('call/await nope', req('call/await', session=S, callId='c3'))
show('call/start echo bad args', req('call/start', session=S, callId='c3b', name='echo', arguments={'text': 5}))
show('call/await echo bad args', req('call/await', session=S, callId='c3b'))
show('call/start asky (agent)', req('call/start', session=S, callId='c3c', name='asky', arguments={}, agent='a1'))
show('call/await asky', req('call/await', session=S, callId='c3c'))
# deep value
D = 100000
deep_text = '{"v":' + '[' * D + '"x"' + ']' * D + '}'
line = '{"jsonrpc":"2.0","id":9001,"method":"call/start","params":{"session":"s1","callId":"c4","name":"deep","arguments":' + deep_text + '}}'
p.stdin.write(line + '\n'); p.stdin.flush()
ln = q.get(timeout=20); print('call/start deep:', ln[:200].strip())
while json.loads(ln).get('method') == 'event':
    last_seq[S] = json.loads(ln)['params']['seq']; ln = q.get(timeout=20); print('  ->', ln[:200].strip())
p.stdin.write('{"jsonrpc":"2.0","id":9002,"method":"call/await","params":{"session":"s1","callId":"c4"}}\n'); p.stdin.flush()
got = []
while True:
    ln = q.get(timeout=60); got.append(ln)
    if '"id":9002' in ln[:40] or '"id":9002' in ln[-200:]: break
for ln in got:
    expect_value = '[' * D + '"x"' + ']' * D
    print('  deep line len', len(ln), 'head', ln[:120].strip(), 'tail', ln.strip()[-60:])
    ok = expect_value in ln
    print('  deep value intact:', ok)
    if not ok: problems.append('deep value not intact')
    if '"method":"event"' in ln[:40]:
        seq = int(ln.split('"seq":')[1].split(',')[0]); last_seq[S] = seq
# gate + abort
show('call/start slow', req('call/start', session=S, callId='c5', name='slow', arguments={'k': 1}))
show('call/start slow2', req('call/start', session=S, callId='c6', name='slow', arguments={'k': 2}))
show('gate/open g1', req('gate/open', session=S, gate='g1'))
show('call/await slow', req('call/await', session=S, callId='c5'))
# fresh gate for abort
setup2 = {'tools': [{'name': 'waiter', 'rawParameters': {'type': 'object'}, 'output': {'schema': {}, 'render': 'json'}, 'body': [{'emit': 'in'}, {'awaitAbort': True}, {'emitSignal': 'seen'}, {'return': 1}]}]}
show('call/await slow2', req('call/await', session=S, callId='c6'))
show('unknown method', req('frobnicate', session=S))
show('unknown instruction', req('hooks/add', session=S, kind='preExecute', listener={'id': 'x', 'do': [{'dance': 1}], 'decide': 'next'}))
show('session/close s1', req('session/close', session=S))
S = 's2'
show('session/open s2', req('session/open', session=S, setup=setup2))
show('call/start waiter', req('call/start', session=S, callId='w1', name='waiter', arguments={}))
show('call/abort waiter', req('call/abort', session=S, callId='w1'))
show('call/await waiter', req('call/await', session=S, callId='w1'))
show('call/start pre-aborted', req('call/start', session=S, callId='w2', name='waiter', arguments={}, aborted=True))
show('call/await pre-aborted', req('call/await', session=S, callId='w2'))
show('session/close s2', req('session/close', session=S))
p.stdin.close(); p.wait(timeout=10)
print('exit', p.returncode)
print('PROBLEMS:', problems or 'none')
sys.exit(1 if problems or p.returncode != 0 else 0)
