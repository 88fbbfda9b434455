// Depth-unbounded JSON helpers. Node 24's JSON.parse handles 100,000 nested levels, but JSON.stringify,
// structuredClone and any recursive walk overflow the call stack there, so everything the adapter
// writes or compares goes through these explicit-work-stack versions.

/**
 * JSON.stringify without recursion: same output as JSON.stringify(value) for JSON data (toJSON honoured,
 * undefined/function/symbol members skipped in objects and written `null` in arrays, non-finite numbers
 * written `null`). Throws on BigInt and cycles, like JSON.stringify.
 */
export function stringify(value) {
  const out = [];
  const active = new Set();
  // frames: { arr: true, v, i, first } | { arr: false, v, keys, i, first }
  const stack = [];
  const prep = (v, key, holder) => {
    if (v !== null && typeof v === 'object' && typeof v.toJSON === 'function') v = v.toJSON(key);
    else if (typeof v === 'bigint' && typeof BigInt.prototype.toJSON === 'function') v = v.toJSON(key);
    return v;
  };
  // Writes a scalar, or opens a container frame. Returns false when v is not serialisable (skip).
  const write = (v) => {
    if (v === null) { out.push('null'); return true; }
    switch (typeof v) {
      case 'string': out.push(JSON.stringify(v)); return true;
      case 'number': out.push(Number.isFinite(v) ? JSON.stringify(v) : 'null'); return true;
      case 'boolean': out.push(v ? 'true' : 'false'); return true;
      case 'bigint': throw new TypeError('Do not know how to serialize a BigInt');
      case 'object': {
        if (v instanceof Number || v instanceof String || v instanceof Boolean) return write(v.valueOf());
        if (active.has(v)) throw new TypeError('Converting circular structure to JSON');
        active.add(v);
        if (Array.isArray(v)) { out.push('['); stack.push({ arr: true, v, i: 0 }); }
        else { out.push('{'); stack.push({ arr: false, v, keys: Object.keys(v), i: 0, first: true }); }
        return true;
      }
      default: return false; // undefined, function, symbol
    }
  };
  const top = prep(value, '', undefined);
  if (!write(top)) return undefined;
  while (stack.length > 0) {
    const f = stack[stack.length - 1];
    if (f.arr) {
      if (f.i >= f.v.length) { out.push(']'); active.delete(f.v); stack.pop(); continue; }
      const i = f.i++;
      if (i > 0) out.push(',');
      if (!write(prep(f.v[i], String(i), f.v))) out.push('null');
    } else {
      if (f.i >= f.keys.length) { out.push('}'); active.delete(f.v); stack.pop(); continue; }
      const k = f.keys[f.i++];
      const v = prep(f.v[k], k, f.v);
      const t = typeof v;
      if (v === undefined || t === 'function' || t === 'symbol') continue;
      out.push(f.first ? '' : ',', JSON.stringify(k), ':');
      f.first = false;
      write(v);
    }
  }
  return out.join('');
}

/** Structural equality of two JSON values without recursion. */
export function jsonEqual(a, b) {
  const stack = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop();
    if (x === y) continue;
    if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x)) {
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
    } else {
      const kx = Object.keys(x);
      const ky = Object.keys(y);
      if (kx.length !== ky.length) return false;
      for (const k of kx) {
        if (!Object.hasOwn(y, k)) return false;
        stack.push([x[k], y[k]]);
      }
    }
  }
  return true;
}
