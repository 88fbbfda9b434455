"""The implementation side of the template adapter: replace what is marked `IMPLEMENT` with calls into
your implementation of dsh-tools. adapter.py does the protocol; this file does the registry.

As shipped, this is a *tiny sample registry*, just enough for the CI slice (README.md): global tools from
`setup.tools` with a small `parameters` DSL, bodies of `return` / `returnArgument` / `emit` / `wait`,
`render: text | json`, the UNKNOWN_TOOL failure, `get`, `schemas` and `dispose`. Everything else answers
the JSON-RPC error -32002 ("unsupported"), which the harness reports as ERROR(adapter) naming the
construct, never as a pass. Declare a feature in FEATURES only once every construct it names works:
scenarios needing an undeclared feature are SKIP(not-applicable), visibly.
"""

import asyncio

import jsonjs

# IMPLEMENT: who you are.
IMPLEMENTATION = {'name': 'template-python (sample registry)', 'version': '0.0.1', 'language': 'python'}
# IMPLEMENT: the features you support (PROTOCOL.md § initialize lists every name) and code runtimes.
FEATURES = []
RUNTIMES = []
# The reason an abort without `reason` carries (JavaScript: an AbortError DOMException).
DEFAULT_ABORT_REASON = {'name': 'AbortError', 'message': 'This operation was aborted'}

# SEAM (results). False: adapter.py sends a call/start call's `result` event with the Result `execute`
# returns, then call/await answers with it. True: your implementation's own `tools/result` observers send
# the events: register one in open_session that calls `session.observed_result(call_id, result)` for every
# result it sees (run_code's sub-calls included, in your implementation's order, also when it publishes
# after `execute` has returned: upstream does not await its result observers); adapter.py then only
# answers call/await with what `execute` returned. No need to edit adapter.py either way.
RESULTS_FROM_OBSERVER = False
# SEAM (abort ordering): how many event-loop turns abort_call lets the tasks an abort wakes run before the
# call/abort response is sent (JavaScript runs abort listeners synchronously inside `abort()`, and their
# promise continuations before the adapter writes its answer).
ABORT_SETTLE_TURNS = 5


class AdapterError(Exception):
    """A request the adapter cannot carry out: answered as a JSON-RPC error with `code`."""

    def __init__(self, message, code=-32000):
        super().__init__(message)
        self.code = code


class Unsupported(AdapterError):
    """-32002: a construct this implementation (or this template) does not support."""

    def __init__(self, what):
        super().__init__('unsupported by the template adapter: %s (see registry.py)' % what, -32002)


class SetupRejected(AdapterError):
    """-32001: building the setup made the implementation throw; the scenario FAILs with the message."""

    def __init__(self, message):
        super().__init__(message, -32001)


class Tool:
    def __init__(self, fixture):
        self.name = fixture['name']
        self.description = fixture.get('description', 'fixture tool %s' % self.name)
        self.parameters = compile_parameters(fixture)
        self.body = fixture.get('body', [{'return': None}])
        self.output = fixture.get('output')


class Registry:
    """IMPLEMENT: your registry, one per session. The sample keeps one global layer in a dict."""

    def __init__(self):
        self.tools = {}
        self.handles = {}
        self.fixtures = {}


# -- session lifecycle -------------------------------------------------------------------------------

def open_session(session, setup):
    """IMPLEMENT: build what the scenario's `setup` describes (spec/README.md § setup). Raise
    SetupRejected when your implementation throws while building it, Unsupported for what you lack."""
    for key in setup:
        if key != 'tools':
            raise Unsupported('setup.%s' % key)
    registry = Registry()
    for fixture in setup.get('tools', []):
        if fixture.get('agent') is not None:
            raise Unsupported('agent-scoped tools')
        handle = fixture.get('handle', fixture['name'])
        registry.fixtures[handle] = fixture
        if fixture.get('register', True):
            register(registry, session, fixture, handle)
    return registry


def close_session(session):
    """IMPLEMENT: drop everything the session built (tasks are already cancelled)."""
    session.state = None


def register(registry, session, fixture, handle):
    tool = Tool(fixture)
    if tool.name in registry.tools:
        # IMPLEMENT: your implementation's duplicate-name behaviour (REG-002: it throws, exact message).
        raise Unsupported('duplicate registration of %r' % tool.name)
    registry.tools[tool.name] = tool
    registry.handles[handle] = tool.name
    session.changed({'type': 'register', 'name': tool.name})


def compile_parameters(fixture):
    """IMPLEMENT: your `defineTool` parameter DSL. The sample knows scalar types and `required`."""
    if 'rawParameters' in fixture:
        return fixture['rawParameters']
    properties, required = {}, []
    for name, spec in (fixture.get('parameters') or {}).items():
        if not isinstance(spec, dict) or spec.get('type') not in ('string', 'number', 'integer', 'boolean') \
                or set(spec) - {'type', 'required'}:
            raise Unsupported('parameter DSL beyond scalar types: %s' % jsonjs.dumps(spec))
        properties[name] = {'type': spec['type']}
        if spec.get('required'):
            required.append(name)
    schema = {'type': 'object', 'properties': properties}
    if required:
        schema['required'] = required
    return schema


# -- requests ----------------------------------------------------------------------------------------

def tools_get(session, params):
    if params.get('agent') is not None:
        raise Unsupported('agents')
    tool = session.state.tools.get(params['name'])
    return {'tool': None if tool is None else schema_of(tool)}


def tools_schemas(session, params):
    if params.get('agent') is not None:
        raise Unsupported('agents')
    return {'schemas': [schema_of(t) for t in session.state.tools.values()]}


def tools_register(session, params):
    fixture = session.state.fixtures.get(params['tool'])
    if fixture is None:
        raise AdapterError('no tool fixture %r' % params['tool'])
    register(session.state, session, fixture, params.get('as', params['tool']))
    return {'outcome': {'ok': True}}


def handle_dispose(session, params):
    name = session.state.handles.get(params['handle'])
    if name is None:
        raise AdapterError('no handle %r' % params['handle'])
    if session.state.tools.pop(name, None) is not None:
        session.changed({'type': 'unregister', 'name': name})
    return {}


def schema_of(tool):
    return {'name': tool.name, 'description': tool.description, 'parameters': tool.parameters}


async def abort_call(session, call, reason):
    """SEAM (abort ordering): call/abort for `call`; its response, and the `eventsThrough` it carries, is
    sent when this returns. The default aborts the call's Signal and lets the woken tasks run a few turns,
    so what they emit at once (an `awaitAbort` body settling, a `waitOrAbort` giving up) comes before the
    response. Route it to your implementation's own controller, or order it otherwise, here."""
    call.signal.abort(reason)
    for _ in range(ABORT_SETTLE_TURNS):
        await asyncio.sleep(0)


async def execute(session, call, name, arguments, agent, parent):
    """IMPLEMENT: run one call through your pipeline and return its Result (spec/README.md § Results and matchers).
    `call.signal` is the caller's abort signal; `call.root_call_id` the caller's `rootCallId` (None: the
    call is its own root; pass it to your implementation's execute as upstream's `rootCallId`). Anything
    this raises becomes a `failure` report. Where the `result` event comes from: RESULTS_FROM_OBSERVER."""
    if agent is not None or parent is not None:
        raise Unsupported('agents and sub-calls')
    tool = session.state.tools.get(name)
    if tool is None:
        message = 'unknown tool "%s"' % name
        return {'isError': True, 'error': {'message': message, 'code': 'UNKNOWN_TOOL', 'name': 'ToolNotFoundError'},
                'content': [{'type': 'text', 'text': 'Error: ' + message}]}
    if call.signal.aborted:
        raise Unsupported('pre-aborted calls')
    value = await run_body(session, call, tool.body, arguments)
    render = (tool.output or {}).get('render', 'text')
    if render not in ('text', 'json'):
        raise Unsupported('render %s' % jsonjs.dumps(render))
    text = value if render == 'text' and isinstance(value, str) else jsonjs.dumps(value)
    return {'isError': False, 'value': value, 'content': [{'type': 'text', 'text': text}]}


async def run_body(session, call, body, arguments):
    """The fixture instructions of a tool body (spec/README.md § Instructions), as far as the
    sample goes. IMPLEMENT the rest: `throw`, `deferContext`, `awaitAbort`, ..."""
    for instruction in body:
        key = next(iter(instruction)) if isinstance(instruction, dict) and len(instruction) == 1 else None
        arg = instruction.get(key) if key else None
        if key == 'return':
            return arg
        if key == 'returnArgument':
            value = arguments
            for part in (arg.split('.') if arg else []):
                value = value.get(part) if isinstance(value, dict) else None
            return value
        if key == 'emit':
            session.mark(arg, call.id)
        elif key == 'emitSignal':
            session.mark(arg, call.id, aborted=call.signal.aborted)
        elif key == 'wait':
            await session.wait_gate(arg)
        else:
            raise Unsupported('tool body instruction %s' % jsonjs.dumps(instruction))
    return None


def unsupported(what):
    def answer(session, params):
        raise Unsupported(what)
    return answer


METHODS = {
    'tools/get': tools_get,
    'tools/schemas': tools_schemas,
    'tools/register': tools_register,
    'handle/dispose': handle_dispose,
    # IMPLEMENT: each of these (PROTOCOL.md § Session requests).
    'hooks/add': unsupported('hooks/add'),
    'scope/restrict': unsupported('scope/restrict'),
    'scope/presentAs': unsupported('scope/presentAs'),
    'scope/open': unsupported('scope/open'),
    'scope/drop': unsupported('scope/drop'),
    'tools/executionMode': unsupported('tools/executionMode'),
    'prompt/assemble': unsupported('prompt/assemble'),
    'sdk/render': unsupported('sdk/render'),
    'schema/check': unsupported('schema/check'),
    'schema/validate': unsupported('schema/validate'),
    'schema/compile': unsupported('schema/compile'),
}
