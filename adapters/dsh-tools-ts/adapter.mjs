// dsh-conformance adapter (protocol v1, conformance/PROTOCOL.md) for the upstream TypeScript
// implementation @deepseek-ai/dsh-tools@0.1.0-rc.8, mounted on a plain cordis Context with its real peer
// plugins. Fixture data (spec/README.md § Fixture vocabulary) is interpreted here and mapped onto the
// real API; see README.md for the mapping table and the known limits.
//
// stdout carries protocol messages only (one line each, through `send`); logs go to stderr.

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Context } from '@deepseek-ai/cordis';
import { SystemPrompt } from '@deepseek-ai/dsh-system-prompt';
import {
  ToolRuntime, defineTool, renderToolsSdk, renderToolsSdkPy, assertSupportedJsonSchema, validateJsonSchemaValue,
  parameterSchemaSpecToJsonSchema, valueSchemaSpecToJsonSchema,
} from '@deepseek-ai/dsh-tools';
import { ApprovalService } from '@deepseek-ai/dsh-user-approval';
import { WorkerThreadCodeRuntime } from '@deepseek-ai/dsh-code-runtime-worker-thread';
import { Session as DshSession } from '@deepseek-ai/dsh-session';
import { createScope } from '@deepseek-ai/dsh-scope';
import { HarnessError, createUserMessage } from '@deepseek-ai/dsh-llm';
import { stringify, jsonEqual } from './json.mjs';

const PROTOCOL_VERSION = '1.0';
const UPSTREAM_VERSION = JSON.parse(
  readFileSync(new URL('./node_modules/@deepseek-ai/dsh-tools/package.json', import.meta.url), 'utf8'),
).version;
const FEATURES = [
  'agents', 'approval', 'execute-wrappers', 'post-execute', 'finalize-content', 'result-listeners', 'change-listeners',
  'code-mode', 'prompt', 'sdk', 'schema',
];
const RUNTIMES = ['typescript'];

const log = (...parts) => process.stderr.write(`[dsh-tools-ts] ${parts.join(' ')}\n`);

// ---------------------------------------------------------------------------------------------------
// The one ordered writer.

function send(message) {
  process.stdout.write(stringify(message) + '\n');
}

/** A request the adapter cannot carry out: answered as a JSON-RPC error, never a crash. */
class AdapterError extends Error {
  constructor(message, code = -32000) {
    super(message);
    this.code = code;
  }
}

// ---------------------------------------------------------------------------------------------------
// Small helpers.

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The single key of a one-key mapping (instructions, decisions), or throws an AdapterError. */
function soleKey(value, what) {
  if (typeof value === 'string') return value;
  if (!isObj(value)) throw new AdapterError(`${what}: expected a one-key mapping, got ${stringify(value)}`);
  const keys = Object.keys(value);
  if (keys.length !== 1) throw new AdapterError(`${what}: expected exactly one key, got ${stringify(keys)}`);
  return keys[0];
}

function makeError(spec) {
  if (typeof spec === 'string') return new Error(spec);
  if (isObj(spec) && typeof spec.message === 'string') {
    const error = new Error(spec.message);
    if (spec.name !== undefined) error.name = spec.name;
    return error;
  }
  throw new AdapterError(`throw: expected a message or { message, name? }, got ${stringify(spec)}`);
}

function argumentAt(args, path) {
  if (path === '') return args;
  let cursor = args;
  for (const part of path.split('.')) {
    if (cursor === null || typeof cursor !== 'object') return undefined;
    cursor = cursor[part];
  }
  return cursor;
}

/** Fixture context `{ text, source? }` → the identified UserMessage upstream carries. */
function toUserMessage(context) {
  if (!isObj(context) || typeof context.text !== 'string') {
    throw new AdapterError(`context: expected { text, source? }, got ${stringify(context)}`);
  }
  return createUserMessage({
    content: [{ type: 'text', text: context.text }],
    source: context.source !== undefined ? { kind: 'plugin', plugin: context.source } : { kind: 'user' },
  });
}

/** UserMessage → `{ text, source? }`. */
function fromUserMessage(message) {
  const text = (message?.content ?? []).filter((b) => b?.type === 'text').map((b) => b.text).join('');
  const source = message?.source?.kind === 'plugin' ? message.source.plugin : undefined;
  return source !== undefined ? { text, source } : { text };
}

/** ToolExecutionResult → the protocol's Result shape (spec/README.md § Results). */
function toResult(r) {
  if (!isObj(r)) return { isError: true, content: [], error: { message: `adapter: non-object result ${String(r)}` } };
  const out = { isError: r.isError === true };
  if (!out.isError) out.value = r.value;
  out.content = r.content;
  if (out.isError) {
    const error = { message: r.error?.message };
    if (r.error?.info?.code !== undefined) error.code = r.error.info.code;
    if (r.error?.info?.name !== undefined) error.name = r.error.info.name;
    out.error = error;
  }
  if (r.meta !== undefined) out.meta = r.meta;
  if (r.additionalContexts !== undefined) out.additionalContexts = r.additionalContexts.map(fromUserMessage);
  return out;
}

function outcomeOf(fn) {
  try {
    fn();
    return { ok: true };
  } catch (error) {
    if (error instanceof AdapterError) throw error;
    return { threw: thrownShape(error) };
  }
}

async function outcomeOfAsync(fn) {
  try {
    return { outcome: { ok: true }, value: await fn() };
  } catch (error) {
    if (error instanceof AdapterError) throw error;
    return { outcome: { threw: thrownShape(error) } };
  }
}

function thrownShape(error) {
  if (error instanceof Error) return { message: error.message, name: error.name };
  return { message: String(error) };
}

function nonFinite(value) {
  if (value === 'Infinity') return Infinity;
  if (value === '-Infinity') return -Infinity;
  if (value === 'NaN') return NaN;
  return value;
}

// ---------------------------------------------------------------------------------------------------
// Instructions. `compile` validates a list once (unknown instructions are adapter errors at the request
// that carries them); `run` interprets it synchronously up to the first instruction that must wait, so
// a listener whose instructions are all synchronous behaves synchronously (a `throw` is a synchronous
// throw), and returns either an outcome or a Promise of one.

const SYNC_INSTRUCTIONS = new Set(['emit', 'emitSignal', 'deferContext', 'return', 'returnArgument', 'throw']);
const ASYNC_INSTRUCTIONS = new Set(['wait', 'waitOrAbort', 'awaitAbort']);
const BODY_ONLY = new Set(['deferContext', 'return', 'returnArgument']);

function compile(list, where, { body = false, sync = false } = {}) {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new AdapterError(`${where}: instructions must be a list`);
  return list.map((instruction, index) => {
    const key = soleKey(instruction, `${where}[${index}]`);
    if (typeof instruction === 'string') throw new AdapterError(`${where}[${index}]: unknown instruction "${key}"`);
    if (!SYNC_INSTRUCTIONS.has(key) && !ASYNC_INSTRUCTIONS.has(key)) {
      throw new AdapterError(`${where}[${index}]: unknown instruction "${key}"`);
    }
    if (!body && BODY_ONLY.has(key)) throw new AdapterError(`${where}[${index}]: instruction "${key}" is only valid in a tool body`);
    if (sync && ASYNC_INSTRUCTIONS.has(key)) {
      throw new AdapterError(`${where}[${index}]: instruction "${key}" cannot run here: this callback is synchronous in upstream`);
    }
    const arg = instruction[key];
    if (key === 'throw') makeError(arg);
    if (key === 'deferContext') toUserMessage(arg);
    return { key, arg };
  });
}

/**
 * env: { session, callId?, signal: () => AbortSignal | undefined, exec?, args? }
 * Returns { returned: false } | { returned: true, value }, or a Promise of it.
 */
function run(program, env) {
  const session = env.session;
  const step = (index) => {
    for (let i = index; i < program.length; i++) {
      const { key, arg } = program[i];
      switch (key) {
        case 'emit':
          session.emit({ type: 'mark', label: arg, ...(env.callId !== undefined ? { callId: env.callId } : {}) });
          break;
        case 'emitSignal':
          session.emit({
            type: 'mark', label: arg, ...(env.callId !== undefined ? { callId: env.callId } : {}),
            aborted: env.signal()?.aborted === true,
          });
          break;
        case 'deferContext':
          env.exec.deferContext(toUserMessage(arg));
          break;
        case 'return':
          return { returned: true, value: arg };
        case 'returnArgument':
          return { returned: true, value: argumentAt(env.args, arg) };
        case 'throw':
          throw makeError(arg);
        case 'wait':
          return session.trackTask(session.waitGate(arg, undefined).then(() => step(i + 1)));
        case 'waitOrAbort':
          return session.trackTask(session.waitGate(arg, env.signal()).then(() => step(i + 1)));
        case 'awaitAbort':
          return session.trackTask(waitAbort(env.signal()).then(() => step(i + 1)));
        default:
          throw new AdapterError(`unknown instruction "${key}"`);
      }
    }
    return { returned: false };
  };
  return step(0);
}

function waitAbort(signal) {
  if (signal === undefined) return new Promise(() => {});
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Runs a list that compile() proved synchronous. */
function runSync(program, env) {
  const outcome = run(program, env);
  if (outcome instanceof Promise) throw new AdapterError('internal: synchronous instruction list suspended');
  return outcome;
}

// ---------------------------------------------------------------------------------------------------
// One session: one cordis Context with the real plugins.

class FixtureSession {
  constructor(id) {
    this.id = id;
    this.seq = 0;
    this.closed = false;
    this.gates = new Map(); // name -> { opened, waiters, resolvers:Set }
    this.calls = new Map(); // callId -> { controller, promise, settled, result }
    this.tokens = new Map(); // callId -> ToolExecutionToken
    this.agents = new Map(); // name -> { key, scope, open }
    this.handles = new Map(); // handle -> disposer
    this.fixtures = new Map(); // tool handle -> fixture
    this.liveTasks = 0;
    this.marks = new Set(); // labels of mark events sent so far
    this.markWaiters = new Map(); // label -> [resolve]
  }

  /** Resolves once a mark with `label` has been sent (at once if it already was). */
  waitForMark(label) {
    if (this.marks.has(label)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.markWaiters.get(label) ?? [];
      waiters.push(resolve);
      this.markWaiters.set(label, waiters);
    });
  }

  emit(event) {
    if (this.closed) {
      log(`session ${this.id}: event after close dropped: ${stringify(event)}`);
      return;
    }
    this.seq += 1;
    send({ jsonrpc: '2.0', method: 'event', params: { session: this.id, seq: this.seq, event } });
    if (event.type === 'mark') {
      this.marks.add(event.label);
      for (const resolve of this.markWaiters.get(event.label) ?? []) resolve();
      this.markWaiters.delete(event.label);
    }
  }

  trackTask(promise) {
    this.liveTasks += 1;
    const done = () => { this.liveTasks -= 1; };
    promise.then(done, done);
    return promise;
  }

  gate(name) {
    let gate = this.gates.get(name);
    if (gate === undefined) {
      gate = { opened: false, waiters: 0, resolvers: new Set() };
      this.gates.set(name, gate);
    }
    return gate;
  }

  /** Resolves when the gate opens or, with a signal, when it aborts. */
  waitGate(name, signal) {
    const gate = this.gate(name);
    if (gate.opened) return Promise.resolve('gate');
    if (signal?.aborted) return Promise.resolve('abort');
    return new Promise((resolve) => {
      gate.waiters += 1;
      let settled = false;
      const finish = (why) => {
        if (settled) return;
        settled = true;
        gate.waiters -= 1;
        gate.resolvers.delete(onGate);
        signal?.removeEventListener('abort', onAbort);
        resolve(why);
      };
      const onGate = () => finish('gate');
      const onAbort = () => finish('abort');
      gate.resolvers.add(onGate);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Calls `fn` once, when the gate opens (at once if already open). */
  onGate(name, fn) {
    const gate = this.gate(name);
    if (gate.opened) {
      queueMicrotask(fn);
      return () => {};
    }
    const cb = () => fn();
    gate.resolvers.add(cb);
    return () => gate.resolvers.delete(cb);
  }

  openGate(name) {
    const gate = this.gate(name);
    if (gate.opened) return;
    gate.opened = true;
    const resolvers = [...gate.resolvers];
    gate.resolvers.clear();
    for (const resolve of resolvers) resolve();
  }

  // -------------------------------------------------------------------------------------------------

  async open(setup) {
    if (setup !== undefined && !isObj(setup)) throw new AdapterError('session/open: setup must be a mapping');
    setup ??= {};
    this.setup = setup;
    const known = new Set(['mode', 'maxParallelSubCalls', 'runtime', 'approval', 'agents', 'tools', 'hooks']);
    for (const key of Object.keys(setup)) if (!known.has(key)) throw new AdapterError(`session/open: unknown setup field "${key}"`);
    if (setup.runtime !== undefined && setup.runtime !== 'typescript') {
      throw new AdapterError(`session/open: runtime "${setup.runtime}" is not available (upstream rc.8 ships no working Python backend; this adapter mounts only dsh-code-runtime-worker-thread)`);
    }
    for (const tool of setup.tools ?? []) {
      const handle = tool.handle ?? tool.name;
      if (this.fixtures.has(handle)) throw new AdapterError(`session/open: duplicate tool handle "${handle}"`);
      this.fixtures.set(handle, tool);
      compileTool(tool); // validate the whole vocabulary before anything is mounted
    }
    if (setup.approval !== undefined) {
      const answers = ['allowed-once', 'rejected', 'cancelled', 'unavailable'];
      if (!isObj(setup.approval) || !answers.includes(setup.approval.answer)) {
        throw new AdapterError(`session/open: approval.answer must be one of ${answers.join(', ')}`);
      }
      this.approvalDo = compile(setup.approval.do, 'approval.do');
    }

    // The deployment: a root Context with the real plugins.
    const root = new Context();
    this.root = root;
    const toolsConfig = {};
    if (setup.mode !== undefined) toolsConfig.mode = setup.mode;
    if (setup.maxParallelSubCalls !== undefined) toolsConfig.maxParallelSubCalls = setup.maxParallelSubCalls;
    await this.mount(root.plugin(SystemPrompt, {}), 'dsh-system-prompt');
    if (setup.runtime === 'typescript') await this.mount(root.plugin(WorkerThreadCodeRuntime, {}), 'dsh-code-runtime-worker-thread');
    if (setup.approval !== undefined) await this.mount(root.plugin(ApprovalService, {}), 'dsh-user-approval');
    await this.mount(root.plugin(ToolRuntime, toolsConfig), 'dsh-tools');

    // The fixture plugin: a plain plugin context, as tool and policy plugins get.
    let fixtureCtx;
    const fiber = root.plugin({
      name: 'dsh-conformance-fixture',
      inject: ['tools', 'systemPrompt'],
      apply(ctx) { fixtureCtx = ctx; },
    });
    await this.mount(fiber, 'fixture plugin');
    if (fixtureCtx === undefined || fixtureCtx.tools === undefined) {
      throw new AdapterError('session/open: the fixture plugin did not start (ctx.tools unavailable)');
    }
    this.ctx = fixtureCtx;

    // The adapter's own observers: token capture for `parent`, and the result event.
    this.ctx.on('tools/pre-execute', (exec, next) => {
      this.tokens.set(exec.callId, exec.token);
      return next();
    }, { prepend: true });
    this.ctx.on('tools/result', (exec, result) => {
      this.tokens.set(exec.callId, exec.token);
      this.emit({ type: 'result', callId: exec.callId, result: toResult(result) });
    });
    if (setup.approval !== undefined) {
      const answer = setup.approval.answer;
      this.ctx.on('approval/request', (req) => {
        const outcome = run(this.approvalDo, { session: this, callId: req.callId, signal: () => req.signal });
        return outcome instanceof Promise ? outcome.then(() => answer) : answer;
      });
    }

    for (const name of setup.agents ?? []) this.openAgent(name);
    for (const tool of setup.tools ?? []) {
      if (tool.register === false) continue;
      const handle = tool.handle ?? tool.name;
      try {
        this.handles.set(handle, this.registerTool(tool));
      } catch (error) {
        if (error instanceof AdapterError) throw error;
        throw new AdapterError(`setup: registering tool "${tool.name}" threw: ${error?.message ?? String(error)}`, -32001);
      }
    }
    const hooks = setup.hooks ?? {};
    if (!isObj(hooks)) throw new AdapterError('setup.hooks must be a mapping');
    for (const kind of Object.keys(hooks)) if (!HOOK_KINDS.includes(kind)) throw new AdapterError(`setup.hooks: unknown hook kind "${kind}"`);
    for (const kind of HOOK_KINDS) {
      for (const listener of hooks[kind] ?? []) {
        try {
          this.handles.set(listener.id, this.addHook(kind, listener));
        } catch (error) {
          if (error instanceof AdapterError) throw error;
          throw new AdapterError(`setup: adding ${kind} listener "${listener.id}" threw: ${error?.message ?? String(error)}`, -32001);
        }
      }
    }
  }

  async mount(fiber, what) {
    await fiber;
    if (fiber.error !== undefined) throw new AdapterError(`session/open: ${what} failed to start: ${fiber.error?.message ?? fiber.error}`, -32001);
  }

  agent(name) {
    if (name === undefined || name === null) return undefined;
    const agent = this.agents.get(name);
    if (agent === undefined) throw new AdapterError(`unknown agent "${name}" (not opened in this session)`);
    return agent;
  }

  agentKey(name) {
    return this.agent(name)?.key;
  }

  /** The context a registration goes through: the agent's scope ctx, or the plain plugin ctx. */
  ctxFor(agentName) {
    if (agentName === undefined || agentName === null) return this.ctx;
    const agent = this.agent(agentName);
    if (!agent.open) throw new AdapterError(`agent "${agentName}" has been dropped`);
    return agent.scope.ctx;
  }

  openAgent(name) {
    if (typeof name !== 'string') throw new AdapterError('agent names are strings');
    const existing = this.agents.get(name);
    if (existing?.open) throw new AdapterError(`agent "${name}" is already open`);
    // The scope key stands for the Agent (dsh-agent keys agent scopes by the Agent object). It carries a
    // real dsh-session Session with an open turn, which the real ApprovalService audits to.
    const session = DshSession.create(`fixture-${this.id}-${name}`);
    session.append('turn/start', {});
    const key = { id: name, session };
    const scope = createScope(this.ctx, key);
    this.agents.set(name, { key, scope, open: true });
  }

  async dropAgent(name) {
    const agent = this.agent(name);
    if (!agent.open) throw new AdapterError(`agent "${name}" is already dropped`);
    agent.open = false;
    await agent.scope.dispose();
  }

  registerTool(fixture) {
    const ctx = this.ctxFor(fixture.agent);
    const definition = buildDefinition(this, fixture);
    return ctx.tools.register(definition());
  }

  addHook(kind, listener) {
    if (!isObj(listener) || typeof listener.id !== 'string') throw new AdapterError(`${kind} listener: expected a mapping with an id`);
    const ctx = this.ctxFor(listener.agent);
    const build = LISTENERS[kind];
    if (build === undefined) throw new AdapterError(`unknown hook kind "${kind}"`);
    return build(this, ctx, listener);
  }

  leaks() {
    const pendingCalls = [...this.calls.entries()].filter(([, c]) => !c.settled).map(([id]) => id);
    const unopenedGates = [...this.gates.entries()].filter(([, g]) => !g.opened && g.waiters > 0).map(([n]) => n);
    return { pendingCalls, unopenedGates, liveTasks: this.liveTasks };
  }

  async dispose() {
    this.closed = true;
    await this.root?.fiber?.dispose?.();
  }
}

const HOOK_KINDS = ['preExecute', 'guards', 'execute', 'postExecute', 'results', 'changes'];

// ---------------------------------------------------------------------------------------------------
// Tool fixtures → definitions.

const TOOL_FIELDS = new Set(['name', 'handle', 'agent', 'register', 'description', 'parameters', 'rawParameters',
  'output', 'timeoutMs', 'concurrency', 'finalizeContent', 'body']);

function compileTool(fixture) {
  if (!isObj(fixture) || typeof fixture.name !== 'string') throw new AdapterError('tool fixture: expected a mapping with a name');
  for (const key of Object.keys(fixture)) if (!TOOL_FIELDS.has(key)) throw new AdapterError(`tool "${fixture.name}": unknown field "${key}"`);
  if (fixture.parameters !== undefined && fixture.rawParameters !== undefined) {
    throw new AdapterError(`tool "${fixture.name}": parameters and rawParameters are exclusive`);
  }
  const body = compile(fixture.body ?? [{ return: null }], `tool "${fixture.name}" body`, { body: true });
  let finalize;
  if (fixture.finalizeContent !== undefined) {
    const f = fixture.finalizeContent;
    if (!isObj(f)) throw new AdapterError(`tool "${fixture.name}": finalizeContent must be a mapping`);
    const actions = ['replace', 'appendText', 'keep', 'throw'].filter((k) => Object.hasOwn(f, k));
    for (const key of Object.keys(f)) if (key !== 'do' && !actions.includes(key)) throw new AdapterError(`tool "${fixture.name}": finalizeContent: unknown field "${key}"`);
    if (actions.length !== 1) throw new AdapterError(`tool "${fixture.name}": finalizeContent needs exactly one action`);
    if (actions[0] === 'throw') makeError(f.throw);
    finalize = { do: compile(f.do, `tool "${fixture.name}" finalizeContent.do`, { sync: true }), action: actions[0], arg: f[actions[0]] };
  }
  const output = fixture.output;
  if (output !== undefined) {
    if (!isObj(output)) throw new AdapterError(`tool "${fixture.name}": output must be a mapping`);
    const render = output.render;
    if (render !== 'text' && render !== 'json') {
      const key = soleKey(render, `tool "${fixture.name}" output.render`);
      if (!['content', 'throw', 'invalid', 'missing'].includes(key)) throw new AdapterError(`tool "${fixture.name}": unknown render "${key}"`);
    }
    if (output.presentationMeta !== undefined) {
      const key = soleKey(output.presentationMeta, `tool "${fixture.name}" output.presentationMeta`);
      if (!['value', 'fromArguments', 'throw'].includes(key)) throw new AdapterError(`tool "${fixture.name}": unknown presentationMeta "${key}"`);
    }
  }
  const c = fixture.concurrency;
  if (c !== undefined && typeof c !== 'boolean' && c !== 'throws' && !(isObj(c) && (Object.hasOwn(c, 'returns') || Object.hasOwn(c, 'argument')))) {
    throw new AdapterError(`tool "${fixture.name}": unknown concurrency ${stringify(c)}`);
  }
  return { body, finalize };
}

function renderText(value) {
  return typeof value === 'string' ? value : stringify(value);
}

/** Returns a thunk building the definition, so that defineTool's own throws belong to the register call. */
function buildDefinition(session, fixture) {
  const { body, finalize } = compileTool(fixture);
  const name = fixture.name;
  const execute = async (args, exec) => {
    session.tokens.set(exec.callId, exec.token);
    const outcome = await run(body, { session, callId: exec.callId, signal: () => exec.signal, exec, args });
    return outcome.returned ? outcome.value : null;
  };

  let output;
  if (fixture.output !== undefined) {
    const o = fixture.output;
    output = { schema: o.schema };
    const render = o.render;
    const key = typeof render === 'string' ? render : Object.keys(render)[0];
    switch (key) {
      case 'text': output.render = (_args, value) => [{ type: 'text', text: renderText(value) }]; break;
      case 'json': output.render = (_args, value) => [{ type: 'text', text: stringify(value) }]; break;
      case 'content': output.render = () => render.content; break;
      case 'throw': output.render = () => { throw makeError(render.throw); }; break;
      case 'invalid': output.render = () => 42; break;
      case 'missing': break;
    }
    if (o.presentationMeta !== undefined) {
      const pm = o.presentationMeta;
      const pk = Object.keys(pm)[0];
      if (pk === 'value') output.presentationMeta = () => pm.value;
      else if (pk === 'fromArguments') output.presentationMeta = (args) => args;
      else output.presentationMeta = () => { throw makeError(pm.throw); };
    }
  }

  let isConcurrencySafe;
  const c = fixture.concurrency;
  if (typeof c === 'boolean') isConcurrencySafe = () => c;
  else if (c === 'throws') isConcurrencySafe = () => { throw new Error(`isConcurrencySafe of "${name}" throws`); };
  else if (isObj(c) && Object.hasOwn(c, 'returns')) isConcurrencySafe = () => c.returns;
  else if (isObj(c)) isConcurrencySafe = (args) => jsonEqual(argumentAt(args, c.argument), c.equals);

  let finalizeContent;
  if (finalize !== undefined) {
    finalizeContent = (exec, result) => {
      runSync(finalize.do, { session, callId: exec.callId, signal: () => exec.signal, exec });
      switch (finalize.action) {
        case 'replace': return finalize.arg;
        case 'appendText': return [...result.content, { type: 'text', text: finalize.arg }];
        case 'keep': return undefined;
        default: throw makeError(finalize.arg);
      }
    };
  }

  const description = fixture.description ?? `fixture tool ${name}`;
  const extras = {
    ...(fixture.timeoutMs !== undefined ? { timeoutMs: nonFinite(fixture.timeoutMs) } : {}),
    ...(isConcurrencySafe !== undefined ? { isConcurrencySafe } : {}),
    ...(finalizeContent !== undefined ? { finalizeContent } : {}),
  };
  if (fixture.rawParameters !== undefined) {
    // Raw JSON Schema, registered without defineTool: no argument validation.
    return () => ({
      name, description, parameters: fixture.rawParameters,
      ...(output !== undefined ? { output } : {}),
      ...extras, execute,
    });
  }
  return () => defineTool({
    name, description, parameters: fixture.parameters ?? {},
    ...(output !== undefined ? { output } : {}),
    ...extras, execute,
  });
}

// ---------------------------------------------------------------------------------------------------
// Listener fixtures → real listeners.

function listenerCommon(listener, kind, actionKey) {
  const allowed = new Set(['id', 'agent', 'tools', 'prepend', 'do', ...(actionKey ? [actionKey] : [])]);
  for (const key of Object.keys(listener)) if (!allowed.has(key)) throw new AdapterError(`${kind} listener "${listener.id}": unknown field "${key}"`);
  if (actionKey !== undefined && !Object.hasOwn(listener, actionKey)) throw new AdapterError(`${kind} listener "${listener.id}": missing "${actionKey}"`);
  const tools = listener.tools;
  return {
    applies: (name) => tools === undefined || tools.includes(name),
    options: { prepend: listener.prepend === true },
  };
}

function compilePreDecision(decision, where) {
  const key = soleKey(decision, where);
  switch (key) {
    case 'next': case 'allow':
      if (typeof decision !== 'string') throw new AdapterError(`${where}: "${key}" is a bare word`);
      return { key };
    case 'deny': return { key, reason: decision.deny };
    case 'ask': return { key, reason: decision.ask };
    case 'throw': makeError(decision.throw); return { key, error: decision.throw };
    case 'afterNext': return { key, then: compilePreDecision(decision.afterNext, `${where}.afterNext`) };
    default: throw new AdapterError(`${where}: unknown preExecute decision "${key}"`);
  }
}

function preDecisionValue(d) {
  switch (d.key) {
    case 'allow': return { kind: 'allow' };
    case 'deny': return { kind: 'deny', reason: d.reason };
    case 'ask': return d.reason === null || d.reason === undefined ? { kind: 'ask' } : { kind: 'ask', reason: d.reason };
    case 'throw': throw makeError(d.error);
    default: throw new AdapterError(`internal: decision ${d.key}`);
  }
}

function applyPre(session, listener, d, exec, next) {
  if (d.key === 'next') return next();
  if (d.key === 'afterNext') {
    return Promise.resolve(next()).then((decision) => {
      session.emit({ type: 'mark', label: `${listener.id}:next`, callId: exec.callId, decision });
      return d.then.key === 'next' ? decision : applyPre(session, listener, d.then, exec, () => decision);
    });
  }
  return preDecisionValue(d);
}

function thenRun(outcome, fn) {
  return outcome instanceof Promise ? outcome.then(fn) : fn();
}

const LISTENERS = {
  preExecute(session, ctx, listener) {
    const { applies, options } = listenerCommon(listener, 'preExecute', 'decide');
    const program = compile(listener.do, `preExecute "${listener.id}" do`);
    const decision = compilePreDecision(listener.decide, `preExecute "${listener.id}" decide`);
    return ctx.on('tools/pre-execute', (exec, next) => {
      if (!applies(exec.name)) return next();
      const entered = run(program, { session, callId: exec.callId, signal: () => exec.signal, exec });
      return thenRun(entered, () => applyPre(session, listener, decision, exec, next));
    }, options);
  },

  guards(session, ctx, listener) {
    const { applies } = listenerCommon(listener, 'guards', 'deny');
    if (listener.prepend === true) throw new AdapterError(`guard "${listener.id}": ctx.tools.guard() has no prepend option`);
    const program = compile(listener.do, `guard "${listener.id}" do`, { sync: true });
    const deny = listener.deny;
    if (deny !== null && typeof deny !== 'string') throw new AdapterError(`guard "${listener.id}": deny must be a string or null`);
    return ctx.tools.guard((exec) => {
      if (!applies(exec.name)) return undefined;
      runSync(program, { session, callId: exec.callId, signal: () => exec.signal, exec });
      return deny === null ? undefined : deny;
    });
  },

  execute(session, ctx, listener) {
    const { applies, options } = listenerCommon(listener, 'execute', 'around');
    const program = compile(listener.do, `execute "${listener.id}" do`);
    const around = listener.around;
    const key = soleKey(around, `execute "${listener.id}" around`);
    const seen = new Map(); // callId -> result this wrapper saw (for cachedFrom)
    let after;
    switch (key) {
      case 'next': if (typeof around !== 'string') throw new AdapterError(`execute "${listener.id}": "next" is a bare word`); break;
      case 'replaceSignal':
        if (!isObj(around.replaceSignal) || typeof around.replaceSignal.abortOnGate !== 'string') {
          throw new AdapterError(`execute "${listener.id}": replaceSignal needs { abortOnGate: gate }`);
        }
        break;
      case 'timeoutOnGate': case 'cachedFrom':
        if (typeof around[key] !== 'string') throw new AdapterError(`execute "${listener.id}": ${key} needs a string`);
        break;
      case 'fail': makeError(around.fail); break;
      case 'returnValue': break;
      case 'afterNext': after = compile(around.afterNext, `execute "${listener.id}" afterNext`); break;
      default: throw new AdapterError(`execute "${listener.id}": unknown around "${key}"`);
    }
    const callNext = async (exec, next) => {
      const result = await next();
      seen.set(exec.callId, result);
      return result;
    };
    const act = async (exec, next) => {
      switch (key) {
        case 'next': return callNext(exec, next);
        case 'replaceSignal': case 'timeoutOnGate': {
          const gateName = key === 'replaceSignal' ? around.replaceSignal.abortOnGate : around.timeoutOnGate;
          const controller = new AbortController();
          let fired = false;
          const cancel = session.onGate(gateName, () => { fired = true; controller.abort(); });
          session.gate(gateName).waiters += 1; // the wrapper waits on this gate while it runs
          const previous = exec.signal;
          exec.signal = controller.signal;
          try {
            const result = await callNext(exec, next);
            if (key === 'timeoutOnGate' && fired) return timeoutResult(exec);
            return result;
          } finally {
            exec.signal = previous;
            cancel();
            session.gate(gateName).waiters -= 1;
          }
        }
        case 'fail': throw makeError(around.fail);
        case 'returnValue': return { isError: false, value: around.returnValue, content: [] };
        case 'cachedFrom':
          // Replay what this wrapper saw for the named call; until it has seen it, pass through.
          return seen.has(around.cachedFrom) ? seen.get(around.cachedFrom) : callNext(exec, next);
        case 'afterNext': {
          const result = await callNext(exec, next);
          await run(after, { session, callId: exec.callId, signal: () => exec.signal, exec });
          return result;
        }
      }
      throw new AdapterError(`internal: around ${key}`);
    };
    return ctx.on('tools/execute', (exec, next) => {
      if (!applies(exec.name)) return next();
      const entered = run(program, { session, callId: exec.callId, signal: () => exec.signal, exec });
      return thenRun(entered, () => act(exec, next));
    }, options);
  },

  postExecute(session, ctx, listener) {
    const { applies, options } = listenerCommon(listener, 'postExecute', 'decide');
    const program = compile(listener.do, `postExecute "${listener.id}" do`);
    const decide = listener.decide;
    const key = soleKey(decide, `postExecute "${listener.id}" decide`);
    let decision;
    switch (key) {
      case 'next': case 'accept':
        if (typeof decide === 'string') { decision = key === 'next' ? 'next' : { kind: 'accept' }; break; }
        if (key === 'next') throw new AdapterError(`postExecute "${listener.id}": "next" is a bare word`);
        decision = () => {
          const a = decide.accept ?? {};
          return {
            kind: 'accept',
            ...(a.content !== undefined ? { content: a.content } : {}),
            ...(Object.hasOwn(a, 'value') ? { value: a.value } : {}),
            ...(a.additionalContexts !== undefined ? { additionalContexts: a.additionalContexts.map(toUserMessage) } : {}),
          };
        };
        decision();
        break;
      case 'block':
        decision = () => ({
          kind: 'block',
          feedback: decide.block.feedback,
          ...(decide.block.additionalContexts !== undefined ? { additionalContexts: decide.block.additionalContexts.map(toUserMessage) } : {}),
        });
        decision();
        break;
      case 'throw': makeError(decide.throw); decision = () => { throw makeError(decide.throw); }; break;
      default: throw new AdapterError(`postExecute "${listener.id}": unknown decision "${key}"`);
    }
    return ctx.on('tools/post-execute', (exec, result, next) => {
      if (!applies(exec.name)) return next();
      const entered = run(program, { session, callId: exec.callId, signal: () => exec.signal, exec });
      return thenRun(entered, () => {
        if (decision === 'next') return next();
        return typeof decision === 'function' ? decision() : decision;
      });
    }, options);
  },

  results(session, ctx, listener) {
    const { applies, options } = listenerCommon(listener, 'results', undefined);
    const program = compile(listener.do, `results "${listener.id}" do`);
    return ctx.on('tools/result', (exec, _result) => {
      if (!applies(exec.name)) return undefined;
      const outcome = run(program, { session, callId: exec.callId, signal: () => exec.signal, exec });
      return outcome instanceof Promise ? outcome : undefined;
    }, options);
  },

  changes(session, ctx, listener) {
    if (listener.tools !== undefined) throw new AdapterError(`changes listener "${listener.id}": unknown field "tools"`);
    const { options } = listenerCommon(listener, 'changes', undefined);
    const program = compile(listener.do, `changes "${listener.id}" do`, { sync: true });
    return ctx.on('tools/change', () => { run(program, { session }); }, options);
  },
};

/** The wrapper-authored failure of `timeoutOnGate` (adapter-authored: upstream rc.8 ships no timeout policy). */
function timeoutResult(exec) {
  const error = new HarnessError(`tool "${exec.name}" timed out`, 'TOOL_TIMEOUT');
  error.name = 'ToolTimeoutError';
  return {
    isError: true,
    error: { message: error.message, info: { name: error.name, code: error.code } },
    content: [{ type: 'text', text: `Error: ${error.message}` }],
  };
}

// ---------------------------------------------------------------------------------------------------
// Requests.

const sessions = new Map();

function sessionOf(params) {
  const id = params?.session;
  if (typeof id !== 'string') throw new AdapterError('missing "session"', -32602);
  const session = sessions.get(id);
  if (session === undefined) throw new AdapterError(`unknown session "${id}"`);
  return session;
}

function need(params, field, type) {
  const value = params?.[field];
  if (value === undefined || (type !== undefined && typeof value !== type)) {
    throw new AdapterError(`missing or invalid "${field}"`, -32602);
  }
  return value;
}

const METHODS = {
  initialize() {
    return {
      protocolVersion: PROTOCOL_VERSION,
      implementation: { name: '@deepseek-ai/dsh-tools', version: UPSTREAM_VERSION, language: 'typescript' },
      capabilities: { profiles: ['dsh-tools-0.1'], features: FEATURES, runtimes: RUNTIMES },
    };
  },

  async 'session/open'(params) {
    const id = need(params, 'session', 'string');
    if (sessions.has(id)) throw new AdapterError(`session "${id}" is already open`);
    const session = new FixtureSession(id);
    sessions.set(id, session);
    // Requests for this session that arrive while it opens wait for the open to finish.
    let opened;
    session.ready = new Promise((resolve) => { opened = resolve; });
    try {
      await session.open(params.setup);
      opened(true);
    } catch (error) {
      opened(false);
      sessions.delete(id);
      session.closed = true;
      session.root?.fiber?.dispose?.().catch?.(() => {});
      throw error instanceof AdapterError ? error : new AdapterError(`session/open failed: ${error?.message ?? error}`, -32001);
    }
    return { _session: session };
  },

  'tools/register'(params, session) {
    const handle = need(params, 'tool', 'string');
    const fixture = session.fixtures.get(handle);
    if (fixture === undefined) throw new AdapterError(`unknown tool fixture handle "${handle}"`);
    let disposer;
    const outcome = outcomeOf(() => { disposer = session.registerTool(fixture); });
    if (disposer !== undefined) session.handles.set(params.as ?? handle, disposer);
    return { outcome };
  },

  'hooks/add'(params, session) {
    const kind = need(params, 'kind', 'string');
    if (!HOOK_KINDS.includes(kind)) throw new AdapterError(`unknown hook kind "${kind}"`);
    const listener = need(params, 'listener');
    let disposer;
    const outcome = outcomeOf(() => { disposer = session.addHook(kind, listener); });
    if (disposer !== undefined) session.handles.set(params.as ?? listener.id, disposer);
    return { outcome };
  },

  'scope/restrict'(params, session) {
    const ctx = session.ctxFor(need(params, 'agent', 'string'));
    const filter = {};
    if (params.allow !== undefined) filter.allow = params.allow;
    if (params.deny !== undefined) filter.deny = params.deny;
    let disposer;
    const outcome = outcomeOf(() => { disposer = ctx.tools.restrict(filter); });
    if (disposer !== undefined && params.as !== undefined) session.handles.set(params.as, disposer);
    return { outcome };
  },

  'scope/presentAs'(params, session) {
    const ctx = session.ctxFor(params.agent);
    const mode = need(params, 'mode', 'string');
    let disposer;
    const outcome = outcomeOf(() => { disposer = ctx.tools.presentAs(mode); });
    if (disposer !== undefined && params.as !== undefined) session.handles.set(params.as, disposer);
    return { outcome };
  },

  'scope/open'(params, session) {
    session.openAgent(need(params, 'agent', 'string'));
    return {};
  },

  async 'scope/drop'(params, session) {
    await session.dropAgent(need(params, 'agent', 'string'));
    return {};
  },

  async 'handle/dispose'(params, session) {
    const handle = need(params, 'handle', 'string');
    const disposer = session.handles.get(handle);
    if (disposer === undefined) throw new AdapterError(`unknown handle "${handle}"`);
    await disposer();
    return {};
  },

  'tools/get'(params, session) {
    const name = need(params, 'name', 'string');
    const tool = session.ctx.tools.get(name, session.agentKey(params.agent));
    if (tool === undefined) return { tool: null };
    return { tool: { name: tool.name, description: tool.description, parameters: tool.parameters } };
  },

  'tools/schemas'(params, session) {
    return { schemas: session.ctx.tools.schemas(session.agentKey(params.agent)) };
  },

  'tools/executionMode'(params, session) {
    const name = need(params, 'name', 'string');
    const agent = session.agentKey(params.agent);
    const mode = session.ctx.tools.executionMode({ name, arguments: params.arguments, ...(agent !== undefined ? { agent } : {}) });
    return { mode: mode.kind };
  },

  'call/start'(params, session) {
    const callId = need(params, 'callId', 'string');
    const name = need(params, 'name', 'string');
    if (session.calls.has(callId)) throw new AdapterError(`callId "${callId}" was already started in this session`);
    const agent = session.agentKey(params.agent);
    let parent;
    if (params.parent !== undefined && params.parent !== null) {
      parent = session.tokens.get(params.parent);
      if (parent === undefined) throw new AdapterError(`parent "${params.parent}" has no execution token (not started, or not yet entered the pipeline)`);
    }
    const controller = new AbortController();
    if (params.aborted === true) controller.abort();
    const call = { controller, settled: false, result: undefined };
    session.calls.set(callId, call);
    const input = {
      callId, name, arguments: params.arguments, signal: controller.signal,
      ...(agent !== undefined ? { agent } : {}),
      ...(parent !== undefined ? { parent } : {}),
    };
    // execute() is async: it runs synchronously up to its first await, then we answer.
    call.promise = session.ctx.tools.execute(input)
      .then(
        (result) => { call.settled = true; call.result = { ok: true, result }; },
        (error) => { call.settled = true; call.result = { ok: false, error }; },
      );
    return {};
  },

  async 'call/await'(params, session) {
    const callId = need(params, 'callId', 'string');
    const call = session.calls.get(callId);
    if (call === undefined) throw new AdapterError(`unknown callId "${callId}"`);
    await call.promise;
    if (!call.result.ok) {
      // execute() is documented never to reject; report it rather than hide it.
      throw new AdapterError(`tools.execute() rejected for "${callId}": ${call.result.error?.stack ?? call.result.error}`, -32002);
    }
    return { result: toResult(call.result.result) };
  },

  'call/abort'(params, session) {
    const callId = need(params, 'callId', 'string');
    const call = session.calls.get(callId);
    if (call === undefined) throw new AdapterError(`unknown callId "${callId}"`);
    if (params.reason !== undefined) call.controller.abort(params.reason);
    else call.controller.abort();
    return {};
  },

  async 'events/waitFor'(params, session) {
    await session.waitForMark(need(params, 'label', 'string'));
    return {};
  },

  'gate/open'(params, session) {
    session.openGate(need(params, 'gate', 'string'));
    return {};
  },

  async 'prompt/assemble'(params, session) {
    const agent = session.agentKey(params.agent);
    const context = agent !== undefined ? { scope: agent, agent } : {};
    const { outcome, value } = await outcomeOfAsync(() => session.ctx.systemPrompt.assemble(context));
    if (!outcome.ok) return { outcome };
    return { outcome, sections: value.sections, tools: value.tools };
  },

  'sdk/render'(params, session) {
    const language = need(params, 'language', 'string');
    const tools = need(params, 'tools');
    const render = language === 'typescript' ? renderToolsSdk : language === 'python' ? renderToolsSdkPy : undefined;
    if (render === undefined) throw new AdapterError(`unknown SDK language "${language}"`);
    void session;
    let text;
    const outcome = outcomeOf(() => { text = render(tools); });
    return outcome.ok ? { outcome, text } : { outcome };
  },

  // schema/*: upstream's schema functions called directly (conformance/PROTOCOL.md § Messages).
  'schema/check'(params, session) {
    void session;
    const schema = need(params, 'schema');
    return { outcome: outcomeOf(() => assertSupportedJsonSchema(schema)) };
  },

  'schema/validate'(params, session) {
    void session;
    const schema = need(params, 'schema');
    if (!Object.hasOwn(params, 'value')) throw new AdapterError('missing param "value"', -32602);
    const outcome = outcomeOf(() => assertSupportedJsonSchema(schema));
    if (!outcome.ok) return { outcome };
    const root = params.root === undefined ? 'value' : need(params, 'root', 'string');
    return { outcome, violations: validateJsonSchemaValue(schema, params.value, root) };
  },

  'schema/compile'(params, session) {
    void session;
    const kind = need(params, 'kind', 'string');
    const spec = need(params, 'spec');
    const compile = kind === 'parameters' ? parameterSchemaSpecToJsonSchema
      : kind === 'value' ? valueSchemaSpecToJsonSchema : undefined;
    if (compile === undefined) throw new AdapterError(`unknown schema kind "${kind}"`, -32602);
    let schema;
    const outcome = outcomeOf(() => { schema = compile(spec); });
    return outcome.ok ? { outcome, schema } : { outcome };
  },

  async 'session/close'(params, session) {
    const leaks = session.leaks();
    const clean = leaks.pendingCalls.length === 0 && leaks.liveTasks === 0;
    const result = { leaks, eventsThrough: session.seq };
    sessions.delete(session.id);
    if (clean) {
      await session.dispose();
    } else {
      // Something still runs: answer now (the leak fails the scenario) and tear down behind the answer.
      session.dispose().catch((error) => log(`session ${session.id}: dispose failed: ${error?.stack ?? error}`));
    }
    session.closed = true;
    return { _final: result };
  },
};

async function handle(message) {
  const id = message.id;
  const method = message.method;
  const params = message.params;
  const reply = (result) => send({ jsonrpc: '2.0', id, result });
  const fail = (code, text) => send({ jsonrpc: '2.0', id, error: { code, message: text } });
  if (typeof method !== 'string') return fail(-32600, 'invalid request: no method');
  const fn = METHODS[method];
  if (fn === undefined) return fail(-32601, `unknown method "${method}"`);
  let session;
  try {
    if (method !== 'initialize' && method !== 'session/open') {
      session = sessionOf(params);
      if (session.ready !== undefined && !(await session.ready)) throw new AdapterError(`session "${session.id}" failed to open`);
    }
    const result = await fn(params ?? {}, session);
    if (method === 'initialize') return reply(result);
    if (result?._final !== undefined) return reply(result._final);
    if (result?._session !== undefined) return reply({ eventsThrough: result._session.seq });
    return reply({ ...result, eventsThrough: session.seq });
  } catch (error) {
    if (error instanceof AdapterError) return fail(error.code, error.message);
    log(`internal error in ${method}: ${error?.stack ?? error}`);
    return fail(-32603, `adapter internal error in ${method}: ${error?.message ?? String(error)}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Main loop.

process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${reason?.stack ?? reason}`));
process.on('uncaughtException', (error) => log(`uncaught exception: ${error?.stack ?? error}`));

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const inFlight = new Set();
lines.on('line', (line) => {
  if (line.trim() === '') return;
  let message;
  try {
    message = JSON.parse(line);
  } catch (error) {
    send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `parse error: ${error.message}` } });
    return;
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } });
    return;
  }
  if (message.id === undefined) return; // a notification: nothing to answer
  // The harness sends one request at a time; requests still run as they arrive.
  const request = handle(message);
  inFlight.add(request);
  request.finally(() => inFlight.delete(request));
});
lines.on('close', async () => {
  // Answer what was asked before stdin closed, then leave.
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  log('stdin closed; exiting');
  // Large lines may still sit in the pipe's write queue: exit only once everything written has flushed.
  process.stdout.write('', () => process.exit(0));
});
