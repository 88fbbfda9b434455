// One scenario's deployment: FixtureSession owns the cordis Context with the real plugins mounted, the
// fixture plugin context, gates, calls, execution tokens, agents (scopes), handles, marks, the leak report
// and disposal.

import { existsSync } from 'node:fs';
import { Context } from '@deepseek-ai/cordis';
import { SystemPrompt } from '@deepseek-ai/dsh-system-prompt';
import { ToolRuntime } from '@deepseek-ai/dsh-tools';
import { ApprovalService } from '@deepseek-ai/dsh-user-approval';
import { Session as DshSession } from '@deepseek-ai/dsh-session';
import { createScope } from '@deepseek-ai/dsh-scope';
import { stringify } from './json.mjs';
import { log, send, AdapterError, isObj, toResult } from './common.mjs';
import { compile, run } from './instructions.mjs';
import { compileTool, buildDefinition } from './tools.mjs';
import { HOOK_KINDS, LISTENERS } from './listeners.mjs';
import { observeDispatchLog } from './codedispatch.mjs';

// rc.6 and rc.7 were published without the worker-thread runtime (versions/README.md): without the package
// the adapter declares no runtime, and Code Mode scenarios that need one are SKIP(not-applicable). Only a
// package installed beside this release counts: Node's lookup would otherwise climb from versions/rc.N
// to the adapter folder and mix in rc.8's runtime.
const WORKER_THREAD = '@deepseek-ai/dsh-code-runtime-worker-thread';
export const WorkerThreadCodeRuntime = existsSync(new URL(`./node_modules/${WORKER_THREAD}/package.json`, import.meta.url))
  ? (await import(WORKER_THREAD)).WorkerThreadCodeRuntime
  : undefined;

// ---------------------------------------------------------------------------------------------------
// One session: one cordis Context with the real plugins.

/** `setup.runtimeLimits` → the WorkerThreadCodeRuntime config (absent fields keep upstream's defaults). */
function runtimeConfig(limits) {
  if (limits === undefined) return {};
  if (!isObj(limits)) throw new AdapterError('session/open: runtimeLimits must be a mapping');
  const names = { computeMs: 'computeMs', maxWallMs: 'maxWallMs', maxOutputBytes: 'maxOutputBytes', maxHeapMb: 'maxOldGenerationSizeMb' };
  const config = {};
  for (const [key, value] of Object.entries(limits)) {
    if (!Object.hasOwn(names, key)) throw new AdapterError(`session/open: unknown runtimeLimits field "${key}"`);
    config[names[key]] = value;
  }
  return config;
}

export class FixtureSession {
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
    this.registryDisposed = false; // registry/dispose was served (REG-027)
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
    const known = new Set(['mode', 'maxParallelSubCalls', 'runtime', 'runtimeLimits', 'approval', 'agents', 'tools', 'hooks', 'prompt', 'logs', 'sessionLog']);
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
      if (isObj(setup.approval) && setup.approval.answerer !== undefined) {
        // The ApprovalService mounted with no approval/request answerer (APPR-011).
        if (setup.approval.answerer !== 'none' || Object.keys(setup.approval).length !== 1) {
          throw new AdapterError('session/open: approval takes `answer` (with an optional `do`) or `answerer: none` alone');
        }
      } else if (!isObj(setup.approval) || !answers.includes(setup.approval.answer)) {
        throw new AdapterError(`session/open: approval.answer must be one of ${answers.join(', ')}`);
      }
      this.approvalDo = compile(setup.approval.do, 'approval.do');
    }

    // The deployment: a root Context with the real plugins.
    const root = new Context();
    this.root = root;
    if (setup.sessionLog !== undefined && typeof setup.sessionLog !== 'boolean') throw new AdapterError('session/open: setup.sessionLog must be a boolean');
    if (setup.logs === true) {
      // Logged warnings become events (the registry logs what it must not fail a call for).
      root.logger.exporter({
        levels: { default: 2 }, // cordis exports warnings (level 2) only to exporters that ask for them
        export: (message) => {
          if (message.type !== 'warn') return;
          const text = message.args.length === 1 && typeof message.args[0] === 'string' ? message.args[0] : message.args.map(String).join(' ');
          this.emit({ type: 'log', level: 'warn', message: text });
        },
      });
    }
    const toolsConfig = {};
    if (setup.mode !== undefined) toolsConfig.mode = setup.mode;
    if (setup.maxParallelSubCalls !== undefined) toolsConfig.maxParallelSubCalls = setup.maxParallelSubCalls;
    const promptConfig = {};
    if (setup.prompt !== undefined) {
      if (!isObj(setup.prompt)) throw new AdapterError('session/open: setup.prompt must be a mapping');
      for (const key of Object.keys(setup.prompt)) if (!['toolOrder', 'sections', 'assemble'].includes(key)) throw new AdapterError(`session/open: unknown setup.prompt field "${key}"`);
      if (setup.prompt.toolOrder !== undefined) promptConfig.toolOrder = setup.prompt.toolOrder;
    }
    await this.mount(root.plugin(SystemPrompt, promptConfig), 'dsh-system-prompt');
    if (setup.runtime === 'typescript') await this.mount(root.plugin(WorkerThreadCodeRuntime, runtimeConfig(setup.runtimeLimits)), 'dsh-code-runtime-worker-thread');
    if (setup.approval !== undefined) {
      this.approvalFiber = root.plugin(ApprovalService, {});
      await this.mount(this.approvalFiber, 'dsh-user-approval');
    }
    this.toolsFiber = root.plugin(ToolRuntime, toolsConfig);
    await this.mount(this.toolsFiber, 'dsh-tools');

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

    // Fixture plugins (the `plugin` of a tool or listener fixture of the setup): each a plain plugin
    // fiber of its own, as a tool or policy plugin is; disposing the fiber disposes what it registered,
    // tools and listeners alike (REG-014, PIPE-024).
    this.plugins = new Map(); // name -> { fiber, ctx, disposed }
    const hookFixtures = isObj(setup.hooks) ? Object.values(setup.hooks).filter(Array.isArray).flat() : [];
    const named = [...(setup.tools ?? []), ...hookFixtures].map((f) => f?.plugin).filter((p) => p !== undefined);
    for (const name of new Set(named)) {
      if (typeof name !== 'string') throw new AdapterError('session/open: a fixture\'s plugin is a name');
      let pluginCtx;
      const pluginFiber = root.plugin({
        name: `dsh-conformance-plugin-${name}`,
        inject: ['tools'],
        apply(ctx) { pluginCtx = ctx; },
      });
      await this.mount(pluginFiber, `fixture plugin "${name}"`);
      this.plugins.set(name, { fiber: pluginFiber, ctx: pluginCtx, disposed: false });
    }

    // The adapter's own observers: token capture for `parent`, and the result event.
    this.ctx.on('tools/pre-execute', (exec, next) => {
      this.tokens.set(exec.callId, exec.token);
      return next();
    }, { prepend: true });
    this.ctx.on('tools/result', (exec, result) => {
      this.tokens.set(exec.callId, exec.token);
      this.emit({ type: 'result', callId: exec.callId, result: toResult(result) });
    });
    if (setup.approval !== undefined && setup.approval.answerer === undefined) {
      const answer = setup.approval.answer;
      this.ctx.on('approval/request', (req) => {
        const outcome = run(this.approvalDo, { session: this, callId: req.callId, signal: () => req.signal, request: req });
        return outcome instanceof Promise ? outcome.then(() => answer) : answer;
      });
    }

    for (const agent of setup.agents ?? []) {
      if (isObj(agent)) this.openAgent(agent.name, agent.parent);
      else this.openAgent(agent);
    }
    this.contributeToPrompt(setup.prompt ?? {});
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

  /**
   * `setup.prompt.sections`, then `setup.prompt.assemble`: static sections and `system-prompt/assemble`
   * listeners, each through the plain plugin ctx or its agent's scope ctx. A listener awaits the rest of
   * the waterfall, drops the named sections and tools, then replaces the lists it names.
   */
  contributeToPrompt(prompt) {
    for (const section of prompt.sections ?? []) {
      const ctx = this.ctxFor(section.agent);
      try {
        ctx.systemPrompt.section({ name: section.name, order: section.order, text: section.text });
      } catch (error) {
        throw new AdapterError(`setup: prompt section "${section.name}" was rejected: ${error?.message ?? String(error)}`, -32001);
      }
    }
    for (const listener of prompt.assemble ?? []) {
      const ctx = this.ctxFor(listener.agent);
      ctx.on('system-prompt/assemble', async (_assembly, _context, next) => {
        const assembly = await next();
        let { sections, tools } = assembly;
        const drop = listener.drop ?? {};
        if (drop.sections !== undefined) sections = sections.filter((s) => !drop.sections.includes(s.name));
        if (drop.tools !== undefined) tools = tools.filter((t) => !drop.tools.includes(t.name));
        const replace = listener.replace ?? {};
        if (replace.sections !== undefined) sections = replace.sections.map((s) => ({ name: s.name, text: s.text }));
        if (replace.tools !== undefined) tools = replace.tools.map((t) => structuredClone(t));
        return { ...assembly, sections, tools };
      });
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

  /** Opens an agent scope; with `parentName`, nested in that agent's scope (dsh-scope's parent link). */
  openAgent(name, parentName) {
    if (typeof name !== 'string') throw new AdapterError('agent names are strings');
    if (parentName !== undefined && typeof parentName !== 'string') throw new AdapterError('an agent\'s parent is an agent name');
    // A dropped parent still names its scope key: a scope's identity outlives its disposal.
    const parent = parentName === undefined ? undefined : this.agent(parentName).key;
    const existing = this.agents.get(name);
    if (existing?.open) throw new AdapterError(`agent "${name}" is already open`);
    // The scope key stands for the Agent (dsh-agent keys agent scopes by the Agent object). It carries a
    // real dsh-session Session with an open turn, which the real ApprovalService audits to.
    const session = DshSession.create(`fixture-${this.id}-${name}`);
    session.append('turn/start', {});
    observeDispatchLog(this, name, session);
    const key = { id: name, session };
    const scope = createScope(this.ctx, key, parent === undefined ? undefined : { parent });
    this.agents.set(name, { key, scope, open: true });
  }

  async dropAgent(name) {
    const agent = this.agent(name);
    if (!agent.open) throw new AdapterError(`agent "${name}" is already dropped`);
    agent.open = false;
    await agent.scope.dispose();
  }

  registerTool(fixture) {
    const ctx = fixture.plugin !== undefined ? this.pluginCtx(fixture, `tool fixture "${fixture.name}"`) : this.ctxFor(fixture.agent);
    const definition = buildDefinition(this, fixture);
    return ctx.tools.register(definition());
  }

  /** The plain context of the fixture plugin a tool or listener fixture names (`what` names the fixture). */
  pluginCtx(fixture, what) {
    if (fixture.agent !== undefined) throw new AdapterError(`${what}: plugin and agent exclude each other`);
    const plugin = this.plugins.get(fixture.plugin);
    if (plugin === undefined) throw new AdapterError(`unknown plugin "${fixture.plugin}"`);
    if (plugin.disposed) throw new AdapterError(`plugin "${fixture.plugin}" is disposed`, -32003);
    return plugin.ctx;
  }

  async disposePlugin(name) {
    const plugin = this.plugins.get(name);
    if (plugin === undefined) throw new AdapterError(`unknown plugin "${name}"`);
    if (plugin.disposed) throw new AdapterError(`plugin "${name}" is already disposed`, -32003);
    plugin.disposed = true;
    await plugin.fiber.dispose();
  }

  /**
   * `registry/dispose`: disposes the ToolRuntime plugin's fiber (REG-027). Every context that injects
   * `tools` — the fixture plugin, the fixture plugins, the agent scopes built from them — goes inactive
   * with all it registered; only the root's prompt service stays reachable.
   */
  async disposeRegistry() {
    if (this.registryDisposed) throw new AdapterError('registry/dispose: the registry of this session is already disposed', -32003);
    this.registryDisposed = true;
    await this.toolsFiber.dispose();
  }

  addHook(kind, listener) {
    if (!isObj(listener) || typeof listener.id !== 'string') throw new AdapterError(`${kind} listener: expected a mapping with an id`);
    const ctx = listener.plugin !== undefined ? this.pluginCtx(listener, `${kind} listener "${listener.id}"`) : this.ctxFor(listener.agent);
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
