// The fixture instruction interpreter (spec/README.md § Instructions): `compile` validates an
// instruction list, `run` / `runSync` interpret it against a session (marks, gates, aborts, returns).

import { AdapterError, soleKey, makeError, argumentAt, toUserMessage, reportFailure } from './common.mjs';

// ---------------------------------------------------------------------------------------------------
// Instructions. `compile` validates a list once (unknown instructions are adapter errors at the request
// that carries them); `run` interprets it synchronously up to the first instruction that must wait, so
// a listener whose instructions are all synchronous behaves synchronously (a `throw` is a synchronous
// throw), and returns either an outcome or a Promise of one.

const SYNC_INSTRUCTIONS = new Set(['emit', 'emitSignal', 'emitSignalReason', 'addHook', 'dispose', 'emitRoot', 'emitRequest', 'deferContext', 'concludeTurn', 'return', 'returnArgument', 'throw']);
const ASYNC_INSTRUCTIONS = new Set(['wait', 'waitOrAbort', 'awaitAbort']);
const BODY_ONLY = new Set(['deferContext', 'concludeTurn', 'return', 'returnArgument']);

export function compile(list, where, { body = false, sync = false } = {}) {
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
    if (key === 'addHook') hookKind(arg, `${where}[${index}]`);
    if (key === 'dispose' && typeof arg !== 'string') throw new AdapterError(`${where}[${index}]: dispose needs a handle name`);
    return { key, arg };
  });
}

/**
 * env: { session, callId?, signal: () => AbortSignal | undefined, exec?, args? }
 * Returns { returned: false } | { returned: true, value }, or a Promise of it.
 */
export function run(program, env) {
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
        case 'emitSignalReason': {
          const signal = env.signal();
          const aborted = signal?.aborted === true;
          session.emit({
            type: 'mark', label: arg, ...(env.callId !== undefined ? { callId: env.callId } : {}),
            aborted, ...(aborted ? { reason: String(signal.reason) } : {}),
          });
          break;
        }
        case 'emitRoot':
          session.emit({
            type: 'mark', label: arg, ...(env.callId !== undefined ? { callId: env.callId } : {}),
            ...(typeof env.exec?.rootCallId === 'string' ? { rootCallId: env.exec.rootCallId } : {}),
          });
          break;
        case 'emitRequest': {
          // The approval answerer's request: the agent (its scope key names it), the tool, the reason.
          const req = env.request;
          session.emit({
            type: 'mark', label: arg, ...(env.callId !== undefined ? { callId: env.callId } : {}),
            ...(req !== undefined && typeof req.agent?.id === 'string' ? { agent: req.agent.id } : {}),
            ...(req !== undefined && typeof req.toolName === 'string' ? { toolName: req.toolName } : {}),
            ...(req !== undefined && req.reason !== undefined ? { reason: req.reason } : {}),
          });
          break;
        }
        case 'deferContext':
          env.exec.deferContext(toUserMessage(arg));
          break;
        case 'concludeTurn':
          env.exec.concludeTurn();
          break;
        case 'return':
          return { returned: true, value: arg };
        case 'returnArgument':
          return { returned: true, value: argumentAt(env.args, arg) };
        case 'throw':
          throw makeError(arg);
        case 'addHook': {
          // Registered from inside running code, as the addHook step does (PIPE-023).
          const kind = hookKind(arg, 'addHook');
          const disposer = session.addHook(kind, arg[kind]);
          session.handles.set(arg.as ?? arg[kind].id, disposer);
          break;
        }
        case 'dispose': {
          const disposer = session.handles.get(arg);
          if (disposer === undefined) throw new AdapterError(`unknown handle "${arg}"`);
          const settled = disposer();
          settled?.catch?.(() => {});
          break;
        }
        case 'wait':
          return session.trackTask(session.waitGate(arg, undefined).then(() => step(i + 1)));
        case 'waitOrAbort':
          return session.trackTask(session.waitGate(arg, env.signal()).then(() => step(i + 1)));
        case 'awaitAbort':
          return session.trackTask(waitAbort(env.signal(), env).then(() => step(i + 1)));
        default:
          throw new AdapterError(`unknown instruction "${key}"`);
      }
    }
    return { returned: false };
  };
  return step(0);
}

function waitAbort(signal, env) {
  if (signal === undefined) {
    // Nothing can ever abort this callback: waiting would only end in the harness's step timeout.
    reportFailure('awaitAbort: this callback has no abort signal in upstream, so it would wait forever', {
      session: env.session.id, callId: env.callId,
    });
    return new Promise(() => {});
  }
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Runs a list that compile() proved synchronous. */
export function runSync(program, env) {
  const outcome = run(program, env);
  if (outcome instanceof Promise) throw new AdapterError('internal: synchronous instruction list suspended');
  return outcome;
}

/** The listener kind of an `addHook` instruction: its one key besides `as`. */
function hookKind(arg, where) {
  const keys = typeof arg === 'object' && arg !== null && !Array.isArray(arg) ? Object.keys(arg).filter((k) => k !== 'as') : [];
  if (keys.length !== 1) throw new AdapterError(`${where}: addHook needs exactly one listener kind key besides "as"`);
  return keys[0];
}
