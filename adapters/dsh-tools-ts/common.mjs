// Shared by every module: the stderr logger, the one ordered stdout writer (`send`), AdapterError (a
// request answered as a JSON-RPC error), and small helpers converting fixture values to and from the
// upstream shapes (errors, arguments, user messages, results, outcomes).

import { HarnessError, createUserMessage } from '@deepseek-ai/dsh-llm';
import { stringify } from './json.mjs';

export const log = (...parts) => process.stderr.write(`[dsh-tools-ts] ${parts.join(' ')}\n`);

// ---------------------------------------------------------------------------------------------------
// The one ordered writer.

export function send(message) {
  process.stdout.write(stringify(message) + '\n');
}

// The session whose request arrived last: an exception nobody catches belongs to it.
let currentSession;
export const setCurrentSession = (id) => { if (typeof id === 'string') currentSession = id; };

/**
 * Reports a failure of the adapter's own code inside a running call (conformance/PROTOCOL.md
 * § Notifications, `failure`): the harness ends the request in flight as ERROR(adapter) with `message`
 * at once, instead of waiting for the step timeout. `session` defaults to the one served last.
 */
export function reportFailure(message, { session = currentSession, callId } = {}) {
  log(`reporting a failure in session ${session}: ${message}`);
  if (session === undefined) return;
  send({ jsonrpc: '2.0', method: 'failure', params: { session, message, ...(callId !== undefined ? { callId } : {}) } });
}

/** A request the adapter cannot carry out: answered as a JSON-RPC error, never a crash. */
export class AdapterError extends Error {
  constructor(message, code = -32000) {
    super(message);
    this.code = code;
  }
}

// ---------------------------------------------------------------------------------------------------
// Small helpers.

export const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The single key of a one-key mapping (instructions, decisions), or throws an AdapterError. */
export function soleKey(value, what) {
  if (typeof value === 'string') return value;
  if (!isObj(value)) throw new AdapterError(`${what}: expected a one-key mapping, got ${stringify(value)}`);
  const keys = Object.keys(value);
  if (keys.length !== 1) throw new AdapterError(`${what}: expected exactly one key, got ${stringify(keys)}`);
  return keys[0];
}

/**
 * The thrown value a fixture `throw` spec stands for: `"text"` → Error; `{ message, name?, code? }` → Error
 * (with `code`, a HarnessError(message, code)); `{ value: V }` → V itself, not an Error.
 */
export function makeError(spec) {
  if (typeof spec === 'string') return new Error(spec);
  if (isObj(spec) && Object.keys(spec).length === 1 && Object.hasOwn(spec, 'value')) return spec.value;
  if (isObj(spec) && typeof spec.message === 'string') {
    const error = spec.code === undefined ? new Error(spec.message) : new HarnessError(spec.message, spec.code);
    if (spec.name !== undefined) error.name = spec.name;
    return error;
  }
  throw new AdapterError(`throw: expected a message, { message, name?, code? } or { value }, got ${stringify(spec)}`);
}

export function argumentAt(args, path) {
  if (path === '') return args;
  let cursor = args;
  for (const part of path.split('.')) {
    if (cursor === null || typeof cursor !== 'object') return undefined;
    cursor = cursor[part];
  }
  return cursor;
}

/** Fixture context `{ text, source? }` → the identified UserMessage upstream carries. */
export function toUserMessage(context) {
  if (!isObj(context) || typeof context.text !== 'string') {
    throw new AdapterError(`context: expected { text, source? }, got ${stringify(context)}`);
  }
  return createUserMessage({
    content: [{ type: 'text', text: context.text }],
    source: context.source !== undefined ? { kind: 'plugin', plugin: context.source } : { kind: 'user' },
  });
}

/** UserMessage → `{ role, source, content }`: the message whole (every part, images too), without its identity. */
function fromUserMessage(message) {
  return { role: message?.role, source: message?.source, content: message?.content };
}

/** ToolExecutionResult → the protocol's Result shape (spec/README.md § Results). */
export function toResult(r) {
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
  // Relayed whatever its value or the result's kind, so a marker where the contract forbids one shows.
  if (r.concludesTurn !== undefined) out.concludesTurn = r.concludesTurn;
  return out;
}

export function outcomeOf(fn) {
  try {
    fn();
    return { ok: true };
  } catch (error) {
    if (error instanceof AdapterError) throw error;
    return { threw: thrownShape(error) };
  }
}

export async function outcomeOfAsync(fn) {
  try {
    return { outcome: { ok: true }, value: await fn() };
  } catch (error) {
    if (error instanceof AdapterError) throw error;
    return { outcome: { threw: thrownShape(error) } };
  }
}

// A HarnessError's string code and a JsonSchemaError's violation list travel with the message (PROTOCOL.md
// Outcome), so scenarios and corpus groups can pin them.
function thrownShape(error) {
  if (!(error instanceof Error)) return { message: String(error) };
  const shape = { message: error.message, name: error.name };
  if (typeof error.code === 'string') shape.code = error.code;
  if (Array.isArray(error.violations) && error.violations.every((v) => typeof v === 'string')) {
    shape.violations = [...error.violations];
  }
  return shape;
}

export function nonFinite(value) {
  if (value === 'Infinity') return Infinity;
  if (value === '-Infinity') return -Infinity;
  if (value === 'NaN') return NaN;
  return value;
}
