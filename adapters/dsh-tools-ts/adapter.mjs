// dsh-conformance adapter (protocol v1, conformance/PROTOCOL.md) for the upstream TypeScript
// implementation @deepseek-ai/dsh-tools@0.1.0-rc.8, mounted on a plain cordis Context with its real peer
// plugins. Fixture data (spec/README.md § Instructions) is interpreted here and mapped onto the
// real API; see README.md for the mapping table and the known limits.
//
// stdout carries protocol messages only (one line each, through `send`); logs go to stderr.
//
// This entry owns the stdin loop and dispatch: each request line is parsed, handed to its handler in
// methods.mjs, and answered through the one ordered writer (common.mjs). Modules: common.mjs (writer,
// errors, helpers), instructions.mjs, session.mjs, tools.mjs, listeners.mjs, methods.mjs, json.mjs.

import { log, send, AdapterError, reportFailure, setCurrentSession } from './common.mjs';
import { METHODS, sessionOf } from './methods.mjs';

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
  setCurrentSession(params?.session);
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

// Nobody caught these: the adapter's own glue failed while a call ran. Say so (PROTOCOL.md `failure`), so
// the trial is ERROR(adapter) with the reason instead of a TIMEOUT blamed on upstream.
process.on('unhandledRejection', (reason) => reportFailure(`unhandled rejection in the adapter: ${reason?.stack ?? reason}`));
process.on('uncaughtException', (error) => reportFailure(`uncaught exception in the adapter: ${error?.stack ?? error}`));

// Lines end at `\n` only (conformance/PROTOCOL.md § Framing). node:readline also ends a line at U+2028
// and U+2029, which JSON strings may hold unescaped, so stdin is split here instead.
const inFlight = new Set();
let pending = [];
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  let start = 0;
  for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
    pending.push(chunk.slice(start, end));
    const line = pending.join('');
    pending = [];
    onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
    start = end + 1;
  }
  if (start < chunk.length) pending.push(chunk.slice(start));
});
process.stdin.on('end', () => {
  const rest = pending.join('');
  pending = [];
  if (rest !== '') onLine(rest);
  onClose();
});

function onLine(line) {
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
}

async function onClose() {
  // Answer what was asked before stdin closed, then leave.
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  log('stdin closed; exiting');
  // Large lines may still sit in the pipe's write queue: exit only once everything written has flushed.
  process.stdout.write('', () => process.exit(0));
}
