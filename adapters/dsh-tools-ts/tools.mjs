// Tool fixtures → upstream tool definitions: `compileTool` validates a fixture, `buildDefinition` maps it
// onto defineTool (or a raw definition) with its body, output render, presentationMeta, concurrency and
// finalizeContent and the UI presenters presentCall / presentResult.

import { defineTool } from '@deepseek-ai/dsh-tools';
import { stringify, jsonEqual } from './json.mjs';
import { AdapterError, isObj, soleKey, makeError, argumentAt, nonFinite, reportFailure } from './common.mjs';
import { compile, run, runSync } from './instructions.mjs';

// ---------------------------------------------------------------------------------------------------
// Tool fixtures → definitions.

const TOOL_FIELDS = new Set(['name', 'handle', 'agent', 'plugin', 'register', 'description', 'parameters', 'rawParameters',
  'output', 'timeoutMs', 'concurrency', 'finalizeContent', 'presentCall', 'presentResult', 'body']);

export function compileTool(fixture) {
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
      if (!['content', 'throw', 'invalid', 'missing', 'fromArguments'].includes(key)) throw new AdapterError(`tool "${fixture.name}": unknown render "${key}"`);
    }
    if (output.presentationMeta !== undefined) {
      const key = soleKey(output.presentationMeta, `tool "${fixture.name}" output.presentationMeta`);
      if (!['value', 'fromArguments', 'fromValue', 'throw'].includes(key)) throw new AdapterError(`tool "${fixture.name}": unknown presentationMeta "${key}"`);
    }
  }
  const c = fixture.concurrency;
  if (c !== undefined && typeof c !== 'boolean' && c !== 'throws' && !(isObj(c) && (Object.hasOwn(c, 'returns') || Object.hasOwn(c, 'argument')))) {
    throw new AdapterError(`tool "${fixture.name}": unknown concurrency ${stringify(c)}`);
  }
  for (const [field, keys] of [['presentCall', ['view', 'fromArguments']], ['presentResult', ['view', 'echo', 'fromMeta']]]) {
    if (fixture[field] === undefined) continue;
    const key = soleKey(fixture[field], `tool "${fixture.name}" ${field}`);
    if (!keys.includes(key)) throw new AdapterError(`tool "${fixture.name}": unknown ${field} "${key}"`);
  }
  return { body, finalize };
}

// presentCall: { view: V } returns V (null: undefined); { fromArguments: true } the generic card over the
// arguments. presentResult: { view }, { echo: true } (the generic card over the result), { fromMeta: true }
// (result.meta as the view).
function presenters(fixture) {
  const out = {};
  const call = fixture.presentCall;
  if (call !== undefined) {
    out.presentCall = Object.hasOwn(call, 'view')
      ? () => call.view ?? undefined
      : (args) => ({ card: 'generic', title: fixture.name, rawInput: args });
  }
  const result = fixture.presentResult;
  if (result !== undefined) {
    if (Object.hasOwn(result, 'view')) out.presentResult = () => result.view ?? undefined;
    else if (Object.hasOwn(result, 'fromMeta')) out.presentResult = (_args, r) => (isObj(r.meta) ? r.meta : undefined);
    else out.presentResult = (_args, r) => ({ card: 'generic', title: r.isError ? 'failed' : 'done', content: r.content });
  }
  return out;
}

function renderText(value) {
  return typeof value === 'string' ? value : stringify(value);
}

/** Returns a thunk building the definition, so that defineTool's own throws belong to the register call. */
export function buildDefinition(session, fixture) {
  const { body, finalize } = compileTool(fixture);
  const name = fixture.name;
  const execute = async (args, exec) => {
    session.tokens.set(exec.callId, exec.token);
    let outcome;
    try {
      outcome = await run(body, { session, callId: exec.callId, signal: () => exec.signal, exec, args });
    } catch (error) {
      // The adapter, not the tool, failed: upstream would publish it as the tool's error result.
      if (error instanceof AdapterError) reportFailure(`tool "${name}" body: ${error.message}`, { session: session.id, callId: exec.callId });
      throw error;
    }
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
      case 'fromArguments': output.render = (args) => [{ type: 'text', text: stringify(args) }]; break;
      case 'missing': break;
    }
    if (o.presentationMeta !== undefined) {
      const pm = o.presentationMeta;
      const pk = Object.keys(pm)[0];
      if (pk === 'value') output.presentationMeta = () => pm.value;
      else if (pk === 'fromArguments') output.presentationMeta = (args) => args;
      else if (pk === 'fromValue') output.presentationMeta = (args, value) => value;
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
    ...presenters(fixture),
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
