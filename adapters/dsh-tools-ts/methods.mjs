// The request handlers: one function per protocol method (conformance/PROTOCOL.md § Messages), the open
// sessions by id, parameter checks, and the capabilities `initialize` declares.

import { readFileSync } from 'node:fs';
import {
  renderToolsSdk, renderToolsSdkPy, assertSupportedJsonSchema, assertObjectJsonSchema, validateJsonSchemaValue,
  parameterSchemaSpecToJsonSchema, valueSchemaSpecToJsonSchema,
} from '@deepseek-ai/dsh-tools';
import { log, AdapterError, toResult, outcomeOf, outcomeOfAsync } from './common.mjs';
import { FixtureSession, WorkerThreadCodeRuntime } from './session.mjs';
import { HOOK_KINDS } from './listeners.mjs';

const PROTOCOL_VERSION = '1.0';
const UPSTREAM_VERSION = JSON.parse(
  readFileSync(new URL('./node_modules/@deepseek-ai/dsh-tools/package.json', import.meta.url), 'utf8'),
).version;
const FEATURES = [
  'agents', 'approval', 'execute-wrappers', 'post-execute', 'finalize-content', 'result-listeners', 'change-listeners',
  'code-mode', 'prompt', 'sdk', 'schema', 'plugins', 'presenters', 'dispatch-log', 'session-log',
  'plain-context-restrict',
];
const RUNTIMES = WorkerThreadCodeRuntime !== undefined ? ['typescript'] : [];

// ---------------------------------------------------------------------------------------------------
// Requests.

const sessions = new Map();

export function sessionOf(params) {
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

export const METHODS = {
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
    // Without an agent: the plain fixture context, which upstream rejects (SCOPE-017).
    if (params.agent !== undefined && typeof params.agent !== 'string') throw new AdapterError('scope/restrict: agent must be a string');
    const ctx = session.ctxFor(params.agent);
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
    const parent = params.parent ?? undefined;
    session.openAgent(need(params, 'agent', 'string'), parent);
    return {};
  },

  async 'plugin/dispose'(params, session) {
    await session.disposePlugin(need(params, 'plugin', 'string'));
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
    // A tool's disposer throws what a tools/change listener threw while announcing the removal (REG-025).
    const { outcome } = await outcomeOfAsync(() => disposer());
    return { outcome };
  },

  'tools/get'(params, session) {
    const name = need(params, 'name', 'string');
    const tool = session.ctx.tools.get(name, session.agentKey(params.agent));
    if (tool === undefined) return { tool: null };
    return { tool: { name: tool.name, description: tool.description, parameters: tool.parameters } };
  },

  'tools/schemas'(params, session) {
    const agent = session.agentKey(params.agent);
    let schemas;
    // schemas() throws for non-lossless raw parameters (REG-020): an outcome, without schemas.
    const outcome = outcomeOf(() => { schemas = session.ctx.tools.schemas(agent); });
    return outcome.ok ? { schemas } : { outcome };
  },

  'tools/executionMode'(params, session) {
    const name = need(params, 'name', 'string');
    const agent = session.agentKey(params.agent);
    const mode = session.ctx.tools.executionMode({ name, arguments: params.arguments, ...(agent !== undefined ? { agent } : {}) });
    return { mode: mode.kind };
  },

  // What get(name, agent) hands back beyond the model-facing schema: output.schema and the optional members.
  'tools/definition'(params, session) {
    const name = need(params, 'name', 'string');
    const tool = session.ctx.tools.get(name, session.agentKey(params.agent));
    if (tool === undefined) return { definition: null };
    const has = {
      presentationMeta: typeof tool.output?.presentationMeta === 'function',
      timeoutMs: tool.timeoutMs !== undefined,
      isConcurrencySafe: typeof tool.isConcurrencySafe === 'function',
      finalizeContent: typeof tool.finalizeContent === 'function',
      presentCall: typeof tool.presentCall === 'function',
      presentResult: typeof tool.presentResult === 'function',
    };
    return { definition: { outputSchema: tool.output?.schema ?? null, members: Object.keys(has).filter((k) => has[k]) } };
  },

  // A UI's path: get(name, agent), then the definition's presentCall / presentResult (undefined → null).
  'tools/present'(params, session) {
    const name = need(params, 'name', 'string');
    const tool = session.ctx.tools.get(name, session.agentKey(params.agent));
    if (tool === undefined) return { present: null };
    const methods = ['presentCall', 'presentResult'].filter((m) => typeof tool[m] === 'function');
    const call = typeof tool.presentCall === 'function' ? tool.presentCall(params.arguments) : undefined;
    const present = { methods, call: call ?? null };
    if (params.result !== undefined) {
      const result = typeof tool.presentResult === 'function' ? tool.presentResult(params.arguments, params.result) : undefined;
      present.result = result ?? null;
    }
    return { present };
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
      ...(typeof params.rootCallId === 'string' ? { rootCallId: params.rootCallId } : {}),
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

  async 'approval/unmount'(params, session) {
    void params;
    const fiber = session.approvalFiber;
    if (fiber === undefined) throw new AdapterError('approval/unmount: no approval seam is mounted (setup.approval)', -32003);
    session.approvalFiber = undefined;
    await fiber.dispose();
    return {};
  },

  async 'registry/dispose'(params, session) {
    void params;
    await session.disposeRegistry();
    return {};
  },

  async 'prompt/assemble'(params, session) {
    if (session.registryDisposed && params.agent !== undefined) {
      throw new AdapterError('prompt/assemble: the registry of this session is disposed (its agent scopes are inactive)', -32003);
    }
    const agent = session.agentKey(params.agent);
    const context = agent !== undefined ? { scope: agent, agent } : {};
    // After registry/dispose the fixture context is inactive: assemble through the root's prompt service.
    const prompt = session.registryDisposed ? session.root.systemPrompt : session.ctx.systemPrompt;
    const { outcome, value } = await outcomeOfAsync(() => prompt.assemble(context));
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
    const assert = params.objectRoot === true ? assertObjectJsonSchema : assertSupportedJsonSchema;
    return { outcome: outcomeOf(() => assert(schema)) };
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
