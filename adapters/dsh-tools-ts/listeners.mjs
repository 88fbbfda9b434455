// Hook kinds: listener fixtures (preExecute, guards, execute wrappers, postExecute, results, changes,
// dispatchLog) → real listeners on a context, and the wrapper-authored timeout result.

import { HarnessError } from '@deepseek-ai/dsh-llm';
import { AdapterError, isObj, soleKey, makeError, toUserMessage } from './common.mjs';
import { compile, run, runSync } from './instructions.mjs';

export const HOOK_KINDS = ['preExecute', 'guards', 'execute', 'postExecute', 'results', 'changes', 'dispatchLog'];

// ---------------------------------------------------------------------------------------------------
// Listener fixtures → real listeners.

function listenerCommon(listener, kind, actionKey) {
  const allowed = new Set(['id', 'agent', 'plugin', 'tools', 'prepend', 'do', ...(actionKey ? [actionKey] : [])]);
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

export const LISTENERS = {
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
        if (!isObj(around.replaceSignal)
          || (typeof around.replaceSignal.abortOnGate !== 'string' && around.replaceSignal.aborted !== true)) {
          throw new AdapterError(`execute "${listener.id}": replaceSignal needs { abortOnGate: gate } or { aborted: true }`);
        }
        break;
      case 'timeoutOnGate': case 'cachedFrom':
        if (typeof around[key] !== 'string') throw new AdapterError(`execute "${listener.id}": ${key} needs a string`);
        break;
      case 'fail': makeError(around.fail); break;
      case 'returnValue': break;
      case 'returnResult':
        if (!isObj(around.returnResult) || !isObj(around.returnResult.result)) {
          throw new AdapterError(`execute "${listener.id}": returnResult needs { result, afterNext? }`);
        }
        authoredResult(around.returnResult.result); // validates once
        break;
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
          if (key === 'replaceSignal' && around.replaceSignal.aborted === true) {
            // A replacement already aborted when next() is called; restored afterwards.
            const previous = exec.signal;
            exec.signal = AbortSignal.abort();
            try { return await callNext(exec, next); } finally { exec.signal = previous; }
          }
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
        case 'returnResult':
          if (around.returnResult.afterNext === true) await callNext(exec, next);
          return authoredResult(around.returnResult.result);
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

  // A `tools/code-dispatch-log` waterfall listener: `do` runs with the sub-call's id as the call being
  // served, then `next` (the rest of the waterfall), `{ replace: [parts] }`, `{ returnValue: V }` (returned
  // as it is) or `{ throw: message }` (the registry contains it and logs the original content).
  dispatchLog(session, ctx, listener) {
    const { applies, options } = listenerCommon(listener, 'dispatchLog', 'decide');
    const program = compile(listener.do, `dispatchLog "${listener.id}" do`);
    const decide = listener.decide;
    const key = soleKey(decide, `dispatchLog "${listener.id}" decide`);
    if (key === 'next' && typeof decide !== 'string') throw new AdapterError(`dispatchLog "${listener.id}": "next" is a bare word`);
    if (key === 'replace' && !Array.isArray(decide.replace)) throw new AdapterError(`dispatchLog "${listener.id}": replace needs a list of parts`);
    if (key === 'throw') makeError(decide.throw);
    if (!['next', 'replace', 'returnValue', 'throw'].includes(key)) throw new AdapterError(`dispatchLog "${listener.id}": unknown decision "${key}"`);
    return ctx.on('tools/code-dispatch-log', (dispatch, next) => {
      if (!applies(dispatch.name)) return next();
      const entered = run(program, { session, callId: dispatch.subCallId });
      return thenRun(entered, () => {
        switch (key) {
          case 'next': return next();
          case 'replace': return structuredClone(decide.replace);
          case 'returnValue': return structuredClone(decide.returnValue);
          default: throw makeError(decide.throw);
        }
      });
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

/** A scenario `returnResult.result` (the protocol's Result shape) as the upstream result a wrapper returns. */
function authoredResult(spec) {
  const out = { isError: spec.isError === true, content: spec.content };
  if (out.isError) {
    if (!isObj(spec.error) || typeof spec.error.message !== 'string') throw new AdapterError('returnResult: a failure needs error.message');
    out.error = { message: spec.error.message };
    if (spec.error.code !== undefined || spec.error.name !== undefined) out.error.info = { name: spec.error.name, code: spec.error.code };
  } else {
    out.value = spec.value;
  }
  if (spec.meta !== undefined) out.meta = spec.meta;
  if (spec.additionalContexts !== undefined) out.additionalContexts = spec.additionalContexts.map(toUserMessage);
  return out;
}
