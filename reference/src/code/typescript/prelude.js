// The in-engine half of the TypeScript runtime: a module compiled to bytecode once per process and
// loaded in each run's fresh context before the program (so every
// intrinsic below is captured before model code can touch a global). It builds:
//  - `inspect`: a subset of Node's `util.inspect` with upstream's console options (depth 4,
//    maxArrayLength 100, maxStringLength 10000, breakLength 80, compact 3), written from Node's documented
//    behaviour: primitives, -0, bigint, quoting, objects and class instances, null prototypes, arrays with
//    holes and grouping, Map/Set, Date, RegExp, errors (stack plus extra keys), boxed primitives, typed
//    arrays, promises, weak collections, functions and classes, getters/setters, circular references;
//  - `makeConsole`: the five-method console shim (`log`, `info`, `warn`, `error`, `debug`);
//  - `makeProcess`: `process.stdout` / `process.stderr` whose `write` is captured like a log entry, and
//    `process.exit(code)`, which ends the run as its worker exiting (the host's `exit`, then a loop the
//    engine's interrupt ends: nothing after it runs, a try/catch cannot keep the program alive);
//  - `makeErrorClass`: a namespace's rejection class (a real `Error` subclass, so `instanceof` works);
//  - `describeThrown`: the exception text upstream reports (`error.stack` for errors, else `String(x)`).
// `host` is { emit(text), promiseState(p), exit(code), source } from Rust (`source`: the body the engine compiles).
export default function (host) {
  'use strict';
  const emit = host.emit;
  const exitHost = host.exit;
  const promiseState = host.promiseState;
  const MapCtor = Map;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const ErrorCtor = Error;
  const StringCtor = String;
  const apply = Reflect.apply;
  const ownKeys = Reflect.ownKeys;
  const getProto = Object.getPrototypeOf;
  const getOwnDesc = Object.getOwnPropertyDescriptor;
  const objectKeys = Object.keys;
  const objectCreate = Object.create;
  const defineProperty = Object.defineProperty;
  const objectIs = Object.is;
  const isArray = Array.isArray;
  const hasOwnFn = Object.prototype.hasOwnProperty;
  const propIsEnumFn = Object.prototype.propertyIsEnumerable;
  const fnToString = Function.prototype.toString;
  const objectToString = Object.prototype.toString;
  const errorToString = Error.prototype.toString;
  const symbolToString = Symbol.prototype.toString;
  // QuickJS keeps `stack` as an Error.prototype accessor whose setter throws on a non-string; V8 (upstream)
  // stores whatever is assigned, so `e.stack = undefined` leaves a stack-less error that fails the run
  // with its message (RUN-055). A non-string becomes the instance's own data property, as in V8.
  const stackDesc = getOwnDesc(ErrorCtor.prototype, 'stack');
  if (stackDesc !== undefined && typeof stackDesc.set === 'function') {
    const setStack = stackDesc.set;
    defineProperty(ErrorCtor.prototype, 'stack', {
      get: stackDesc.get,
      enumerable: stackDesc.enumerable,
      configurable: true,
      set(value) {
        if (typeof value === 'string' || (typeof this !== 'object' && typeof this !== 'function') || this === null) {
          return apply(setStack, this, [value]);
        }
        defineProperty(this, 'stack', { value, writable: true, enumerable: false, configurable: true });
      },
    });
  }
  const symbolIterator = Symbol.iterator;
  const symbolToStringTag = Symbol.toStringTag;
  const mapSize = getOwnDesc(Map.prototype, 'size').get;
  const mapEntries = Map.prototype.entries;
  const mapIterNext = getProto(new Map().entries()).next;
  const setSize = getOwnDesc(Set.prototype, 'size').get;
  const setValues = Set.prototype.values;
  const setIterNext = getProto(new Set().values()).next;
  const weakMapHas = WeakMap.prototype.has;
  const weakSetHas = WeakSet.prototype.has;
  const dateGetTime = Date.prototype.getTime;
  const dateToISOString = Date.prototype.toISOString;
  const dateToString = Date.prototype.toString;
  const regexpSource = getOwnDesc(RegExp.prototype, 'source').get;
  const regexpToString = RegExp.prototype.toString;
  const typedArrayProto = getProto(Uint8Array.prototype);
  const typedArrayTag = getOwnDesc(typedArrayProto, symbolToStringTag).get;
  const typedArrayLength = getOwnDesc(typedArrayProto, 'length').get;
  const numberValueOf = Number.prototype.valueOf;
  const stringValueOf = String.prototype.valueOf;
  const booleanValueOf = Boolean.prototype.valueOf;
  const bigintValueOf = BigInt.prototype.valueOf;
  const symbolValueOf = Symbol.prototype.valueOf;
  const stringIncludes = String.prototype.includes;
  const stringIndexOf = String.prototype.indexOf;
  const stringSlice = String.prototype.slice;
  const stringRepeat = String.prototype.repeat;
  const stringPadStart = String.prototype.padStart;
  const stringPadEnd = String.prototype.padEnd;
  const stringStartsWith = String.prototype.startsWith;
  const stringEndsWith = String.prototype.endsWith;
  const stringCharCodeAt = String.prototype.charCodeAt;
  const stringToWellFormed = String.prototype.toWellFormed;
  const numberToString = Number.prototype.toString;
  const regexpExec = RegExp.prototype.exec;
  const mathMin = Math.min, mathMax = Math.max, mathSqrt = Math.sqrt, mathRound = Math.round, mathFloor = Math.floor;
  const AsyncFunctionProto = getProto(async function () {});
  const GeneratorFunctionProto = getProto(function* () {});
  const AsyncGeneratorFunctionProto = getProto(async function* () {});
  const PromiseProto = Promise.prototype;

  const call = (fn, self, ...args) => apply(fn, self, args);
  const hasOwn = (o, k) => call(hasOwnFn, o, k);
  const isEnumerable = (o, k) => call(propIsEnumFn, o, k);
  const includes = (s, x) => call(stringIncludes, s, x);
  const repeat = (s, n) => call(stringRepeat, s, n);
  const slice = (s, a, b) => call(stringSlice, s, a, b);
  const push = (list, item) => { defineProperty(list, list.length, { value: item, writable: true, enumerable: true, configurable: true }); };
  const brand = (fn, value) => { try { call(fn, value); return true; } catch { return false; } };
  const isMap = (v) => brand(mapSize, v);
  const isSet = (v) => brand(setSize, v);
  const isWeakMap = (v) => brand(weakMapHas, v);
  const isWeakSet = (v) => brand(weakSetHas, v);
  const isDate = (v) => brand(dateGetTime, v);
  const isRegExp = (v) => brand(regexpSource, v) && v !== RegExpProtoConst;
  const RegExpProtoConst = RegExp.prototype;
  const isTypedArray = (v) => { try { return call(typedArrayTag, v) !== undefined; } catch { return false; } };
  const isError = (v) => {
    for (let p = v; p !== null; p = getProto(p)) if (p === ErrorCtor.prototype) return true;
    return false;
  };
  const inChain = (v, proto) => {
    for (let p = getProto(v); p !== null; p = getProto(p)) if (p === proto) return true;
    return false;
  };

  const kObjectType = 0;
  const kArrayType = 1;
  const kArrayExtrasType = 2;
  const DEPTH = 4;
  const MAX_ARRAY_LENGTH = 100;
  const MAX_STRING_LENGTH = 10000;
  const BREAK_LENGTH = 80;
  const COMPACT = 3;
  const keyIdentifier = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
  const numberKey = /^(0|[1-9][0-9]*)$/;
  const META = ['\\x00', '\\x01', '\\x02', '\\x03', '\\x04', '\\x05', '\\x06', '\\x07', '\\b', '\\t', '\\n', '\\x0B', '\\f', '\\r', '\\x0E', '\\x0F',
    '\\x10', '\\x11', '\\x12', '\\x13', '\\x14', '\\x15', '\\x16', '\\x17', '\\x18', '\\x19', '\\x1A', '\\x1B', '\\x1C', '\\x1D', '\\x1E', '\\x1F'];

  const hex2 = (n) => { const h = call(numberToString, n, 16); return n < 16 ? '0' + h : h; };

  function strEscape(str) {
    let quote = "'";
    if (includes(str, "'")) {
      if (!includes(str, '"')) quote = '"';
      else if (!includes(str, '`') && !includes(str, '${')) quote = '`';
    }
    let result = '';
    let last = 0;
    for (let i = 0; i < str.length; i++) {
      const point = call(stringCharCodeAt, str, i);
      let escaped;
      if ((point === 39 && quote === "'") || point === 92 || point < 32 || (point > 126 && point < 160)) {
        escaped = point === 39 ? "\\'" : point === 92 ? '\\\\' : point < 32 ? META[point] : '\\x' + call(stringToUpper, hex2(point));
      } else if (point >= 0xd800 && point <= 0xdfff) {
        if (point <= 0xdbff && i + 1 < str.length) {
          const next = call(stringCharCodeAt, str, i + 1);
          if (next >= 0xdc00 && next <= 0xdfff) { i++; continue; }
        }
        escaped = '\\u' + call(numberToString, point, 16);
      } else {
        continue;
      }
      result += slice(str, last, i) + escaped;
      last = i + 1;
    }
    if (last !== 0) str = result + slice(str, last);
    return quote + str + quote;
  }
  const stringToUpper = String.prototype.toUpperCase;

  function formatNumber(n) {
    return objectIs(n, -0) ? '-0' : StringCtor(n);
  }

  function formatPrimitive(value, ctx) {
    switch (typeof value) {
      case 'string': {
        let trailer = '';
        if (value.length > MAX_STRING_LENGTH) {
          const remaining = value.length - MAX_STRING_LENGTH;
          value = slice(value, 0, MAX_STRING_LENGTH);
          trailer = `... ${remaining} more character${remaining > 1 ? 's' : ''}`;
        }
        if (value.length > 16 && value.length > BREAK_LENGTH - ctx.indentationLvl - 4) {
          // Split after each newline, as Node does for long multi-line strings.
          const lines = [];
          let start = 0;
          for (let i = 0; i < value.length; i++) {
            if (call(stringCharCodeAt, value, i) === 10) { push(lines, slice(value, start, i + 1)); start = i + 1; }
          }
          if (start < value.length || lines.length === 0) push(lines, slice(value, start));
          let out = '';
          for (let i = 0; i < lines.length; i++) {
            if (i > 0) out += ` +\n${repeat(' ', ctx.indentationLvl + 2)}`;
            out += strEscape(lines[i]);
          }
          return out + trailer;
        }
        return strEscape(value) + trailer;
      }
      case 'number': return formatNumber(value);
      case 'bigint': return `${StringCtor(value)}n`;
      case 'boolean': return value ? 'true' : 'false';
      case 'undefined': return 'undefined';
      case 'symbol': return call(symbolToString, value);
      default: return StringCtor(value);
    }
  }

  function isInstanceof(object, ctor) {
    try {
      const proto = ctor.prototype;
      if ((typeof proto !== 'object' && typeof proto !== 'function') || proto === null) return false;
      return inChain(object, proto);
    } catch { return false; }
  }

  function getConstructorName(obj, ctx, recurseTimes) {
    let firstProto;
    const tmp = obj;
    while (obj) {
      const descriptor = getOwnDesc(obj, 'constructor');
      if (descriptor !== undefined && typeof descriptor.value === 'function' && descriptor.value.name !== '' && isInstanceof(tmp, descriptor.value)) {
        return StringCtor(descriptor.value.name);
      }
      obj = getProto(obj);
      if (firstProto === undefined) firstProto = obj;
    }
    if (firstProto === null) return null;
    const res = 'Object';
    if (recurseTimes > DEPTH) return `${res} <Complex prototype>`;
    const protoConstr = getConstructorName(firstProto, ctx, recurseTimes + 1);
    if (protoConstr === null) return `${res} <[Object: null prototype] {}>`;
    return `${res} <${protoConstr}>`;
  }

  function getPrefix(constructor, tag, fallback, size = '') {
    if (constructor === null) {
      if (tag !== '' && fallback !== tag) return `[${fallback}${size}: null prototype] [${tag}] `;
      return `[${fallback}${size}: null prototype] `;
    }
    if (tag !== '' && constructor !== tag) return `${constructor}${size} [${tag}] `;
    return `${constructor}${size} `;
  }

  function getKeys(value) {
    const keys = objectKeys(value);
    const all = ownKeys(value);
    for (let i = 0; i < all.length; i++) {
      const key = all[i];
      if (typeof key === 'symbol' && isEnumerable(value, key)) push(keys, key);
    }
    return keys;
  }

  function getNonIndexKeys(value) {
    const keys = [];
    const all = ownKeys(value);
    for (let i = 0; i < all.length; i++) {
      const key = all[i];
      if (typeof key === 'string' && call(regexpExec, numberKey, key) !== null && +key < 4294967295) continue;
      if (isEnumerable(value, key)) push(keys, key);
    }
    return keys;
  }

  function getFunctionBase(value, constructor, tag) {
    let source = '';
    try { source = call(fnToString, value); } catch {}
    if (call(stringStartsWith, source, 'class') && call(stringEndsWith, source, '}')) {
      const name = (hasOwn(value, 'name') && value.name) || '(anonymous)';
      let base = `class ${name}`;
      if (constructor !== 'Function' && constructor !== null) base += ` [${constructor}]`;
      if (tag !== '' && constructor !== tag) base += ` [${tag}]`;
      if (constructor !== null) {
        const superName = getProto(value).name;
        if (superName) base += ` extends ${superName}`;
      } else {
        base += ' extends [null prototype]';
      }
      return `[${base}]`;
    }
    let type = 'Function';
    if (inChain(value, GeneratorFunctionProto)) type = 'GeneratorFunction';
    if (inChain(value, AsyncFunctionProto)) type = 'AsyncFunction';
    if (inChain(value, AsyncGeneratorFunctionProto)) type = 'AsyncGeneratorFunction';
    let base = `[${type}`;
    if (constructor === null) base += ' (null prototype)';
    if (value.name === '') base += ' (anonymous)';
    else base += `: ${value.name}`;
    base += ']';
    if (constructor !== type && constructor !== null) base += ` ${constructor}`;
    if (tag !== '' && constructor !== tag) base += ` [${tag}]`;
    return base;
  }

  /** `error.stack` as upstream sees it: a `Name: message` header line, then the frames. */
  function stackOf(err) {
    const stack = err.stack;
    if (typeof stack !== 'string') return stack;
    let header;
    try { header = call(errorToString, err); } catch { return stack; }
    if (call(stringStartsWith, stack, header)) return stack;
    const frames = stack.length > 0 && !call(stringStartsWith, stack, '\n') ? '\n' + stack : stack;
    const text = header + frames;
    return call(stringEndsWith, text, '\n') ? slice(text, 0, -1) : text;
  }

  function formatError(err, constructor, tag, ctx, keys) {
    nameCallee(err);
    const name = err.name != null ? StringCtor(err.name) : 'Error';
    const rawStack = stackOf(err);
    let stack = typeof rawStack === 'string' && rawStack !== '' ? rawStack : call(errorToString, err);
    for (const key of ['name', 'message', 'stack']) {
      let index = -1;
      for (let i = 0; i < keys.length; i++) if (keys[i] === key) { index = i; break; }
      if (index !== -1) {
        const v = err[key];
        if (typeof v !== 'string' || includes(stack, v)) {
          for (let i = index; i < keys.length - 1; i++) keys[i] = keys[i + 1];
          keys.length -= 1;
        }
      }
    }
    if ('cause' in err) {
      let present = false;
      for (let i = 0; i < keys.length; i++) if (keys[i] === 'cause') present = true;
      if (!present) push(keys, 'cause');
    }
    // improveStack
    let len = name.length;
    if (constructor === null || (call(stringEndsWith, name, 'Error') && call(stringStartsWith, stack, name) &&
        (stack.length === len || stack[len] === ':' || stack[len] === '\n'))) {
      let fallback = 'Error';
      if (constructor === null) {
        const start = call(regexpExec, /^([A-Z][a-z_ A-Z0-9[\]()-]+)(?::|\n\s+at)/, stack) || call(regexpExec, /^([a-z_A-Z0-9-]*Error)$/, stack);
        fallback = (start && start[1]) || '';
        len = fallback.length;
        fallback = fallback || 'Error';
      }
      const prefix = slice(getPrefix(constructor, tag, fallback), 0, -1);
      if (name !== prefix) {
        if (includes(prefix, name)) {
          stack = len === 0 ? `${prefix}: ${stack}` : `${prefix}${slice(stack, len)}`;
        } else {
          stack = `${prefix} [${name}]${slice(stack, len)}`;
        }
      }
    }
    let pos = (err.message && call(stringIndexOf, stack, err.message)) || -1;
    if (pos !== -1) pos += err.message.length;
    const stackStart = call(stringIndexOf, stack, '\n    at', pos);
    if (stackStart === -1) stack = `[${stack}]`;
    if (ctx.indentationLvl !== 0) {
      const indentation = repeat(' ', ctx.indentationLvl);
      let out = '';
      for (let i = 0; i < stack.length; i++) out += stack[i] === '\n' ? `\n${indentation}` : stack[i];
      stack = out;
    }
    return stack;
  }

  function formatValue(ctx, value, recurseTimes) {
    if (typeof value !== 'object' && typeof value !== 'function') return formatPrimitive(value, ctx);
    if (value === null) return 'null';
    for (let i = 0; i < ctx.seen.length; i++) {
      if (ctx.seen[i] === value) {
        let index = 1;
        if (ctx.circular === undefined) {
          ctx.circular = new MapCtor();
          call(mapSet, ctx.circular, value, index);
        } else {
          index = call(mapGet, ctx.circular, value);
          if (index === undefined) {
            index = call(mapSize, ctx.circular) + 1;
            call(mapSet, ctx.circular, value, index);
          }
        }
        return `[Circular *${index}]`;
      }
    }
    return formatRaw(ctx, value, recurseTimes);
  }

  function formatRaw(ctx, value, recurseTimes) {
    let keys;
    const constructor = getConstructorName(value, ctx, recurseTimes);
    let tag = value[symbolToStringTag];
    if (typeof tag !== 'string' || (tag !== '' && isEnumerable(value, symbolToStringTag))) tag = '';
    let base = '';
    let formatter = () => [];
    let braces;
    let noIterator = true;
    let extrasType = kObjectType;
    if (symbolIterator in value || constructor === null) {
      noIterator = false;
      if (isArray(value)) {
        const prefix = (constructor !== 'Array' || tag !== '') ? getPrefix(constructor, tag, 'Array', `(${value.length})`) : '';
        keys = getNonIndexKeys(value);
        braces = [`${prefix}[`, ']'];
        if (value.length === 0 && keys.length === 0) return `${braces[0]}]`;
        extrasType = kArrayExtrasType;
        formatter = formatArray;
      } else if (isSet(value)) {
        const size = call(setSize, value);
        const prefix = getPrefix(constructor, tag, 'Set', `(${size})`);
        keys = getKeys(value);
        formatter = formatSet;
        if (size === 0 && keys.length === 0) return `${prefix}{}`;
        braces = [`${prefix}{`, '}'];
      } else if (isMap(value)) {
        const size = call(mapSize, value);
        const prefix = getPrefix(constructor, tag, 'Map', `(${size})`);
        keys = getKeys(value);
        formatter = formatMap;
        if (size === 0 && keys.length === 0) return `${prefix}{}`;
        braces = [`${prefix}{`, '}'];
      } else if (isTypedArray(value)) {
        keys = getNonIndexKeys(value);
        const size = call(typedArrayLength, value);
        const fallback = constructor === null ? call(typedArrayTag, value) : '';
        const prefix = getPrefix(constructor, tag, fallback, `(${size})`);
        braces = [`${prefix}[`, ']'];
        if (size === 0 && keys.length === 0) return `${braces[0]}]`;
        formatter = formatTypedArray;
        extrasType = kArrayExtrasType;
      } else {
        noIterator = true;
      }
    }
    if (noIterator) {
      keys = getKeys(value);
      braces = ['{', '}'];
      if (typeof value === 'function') {
        base = getFunctionBase(value, constructor, tag);
        if (keys.length === 0) return base;
      } else if (constructor === 'Object') {
        if (call(objectToString, value) === '[object Arguments]') braces[0] = '[Arguments] {';
        else if (tag !== '') braces[0] = `${getPrefix(constructor, tag, 'Object')}{`;
        if (keys.length === 0) return `${braces[0]}}`;
      } else if (isRegExp(value)) {
        base = call(regexpToString, value);
        const prefix = getPrefix(constructor, tag, 'RegExp');
        if (prefix !== 'RegExp ') base = `${prefix}${base}`;
        if (keys.length === 0 || recurseTimes > DEPTH) return base;
      } else if (isDate(value)) {
        const time = call(dateGetTime, value);
        base = time !== time ? call(dateToString, value) : call(dateToISOString, value);
        const prefix = getPrefix(constructor, tag, 'Date');
        if (prefix !== 'Date ') base = `${prefix}${base}`;
        if (keys.length === 0) return base;
      } else if (isError(value)) {
        base = formatError(value, constructor, tag, ctx, keys);
        if (keys.length === 0) return base;
      } else if (inChain(value, PromiseProto) && promiseState(value) !== undefined) {
        braces[0] = `${getPrefix(constructor, tag, 'Promise')}{`;
        formatter = formatPromise;
      } else if (isWeakSet(value)) {
        braces[0] = `${getPrefix(constructor, tag, 'WeakSet')}{`;
        formatter = () => ['<items unknown>'];
      } else if (isWeakMap(value)) {
        braces[0] = `${getPrefix(constructor, tag, 'WeakMap')}{`;
        formatter = () => ['<items unknown>'];
      } else if (boxedKind(value) !== undefined) {
        const [type, fn] = boxedKind(value);
        if (type === 'String') {
          const len = call(stringValueOf, value).length;
          const rest = [];
          for (let i = 0; i < keys.length; i++) {
            const k = keys[i];
            if (typeof k === 'string' && call(regexpExec, numberKey, k) !== null && +k < len) continue;
            push(rest, k);
          }
          keys = rest;
        }
        base = `[${type}`;
        if (type !== constructor) base += constructor === null ? ' (null prototype)' : ` (${constructor})`;
        base += `: ${formatPrimitive(call(fn, value), { indentationLvl: 0 })}]`;
        if (tag !== '' && tag !== constructor) base += ` [${tag}]`;
        if (keys.length === 0) return base;
      } else {
        if (keys.length === 0) return `${getPrefix(constructor, tag, 'Object')}{}`;
        braces[0] = `${getPrefix(constructor, tag, 'Object')}{`;
      }
    }
    if (recurseTimes > DEPTH) {
      let name = slice(getPrefix(constructor, tag, 'Object'), 0, -1);
      if (constructor !== null) name = `[${name}]`;
      return name;
    }
    recurseTimes += 1;
    push(ctx.seen, value);
    ctx.currentDepth = recurseTimes;
    const output = formatter(ctx, value, recurseTimes);
    for (let i = 0; i < keys.length; i++) push(output, formatProperty(ctx, value, recurseTimes, keys[i], extrasType));
    if (ctx.circular !== undefined) {
      const index = call(mapGet, ctx.circular, value);
      if (index !== undefined) {
        const reference = `<ref *${index}>`;
        base = base === '' ? reference : `${reference} ${base}`;
      }
    }
    ctx.seen.length -= 1;
    return reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value);
  }

  function boxedKind(value) {
    if (brand(numberValueOf, value)) return ['Number', numberValueOf];
    if (brand(stringValueOf, value)) return ['String', stringValueOf];
    if (brand(booleanValueOf, value)) return ['Boolean', booleanValueOf];
    if (brand(bigintValueOf, value)) return ['BigInt', bigintValueOf];
    if (brand(symbolValueOf, value)) return ['Symbol', symbolValueOf];
    return undefined;
  }

  function formatProperty(ctx, value, recurseTimes, key, type) {
    let str;
    const desc = getOwnDesc(value, key) || { value: value[key], enumerable: true };
    if (desc.value !== undefined) {
      ctx.indentationLvl += 2;
      str = formatValue(ctx, desc.value, recurseTimes);
      ctx.indentationLvl -= 2;
    } else if (desc.get !== undefined) {
      str = desc.set !== undefined ? '[Getter/Setter]' : '[Getter]';
    } else if (desc.set !== undefined) {
      str = '[Setter]';
    } else {
      str = 'undefined';
    }
    if (type === kArrayType) return str;
    let name;
    if (typeof key === 'symbol') name = call(symbolToString, key);
    else if (key === '__proto__') name = "['__proto__']";
    else if (desc.enumerable === false) name = `[${key}]`;
    else if (call(regexpExec, keyIdentifier, key) !== null) name = key;
    else name = strEscape(key);
    return `${name}: ${str}`;
  }

  function formatArray(ctx, value, recurseTimes) {
    const valLen = value.length;
    const len = mathMin(MAX_ARRAY_LENGTH, valLen);
    const remaining = valLen - len;
    const output = [];
    for (let i = 0; i < len; i++) {
      if (!hasOwn(value, i)) return formatSpecialArray(ctx, value, recurseTimes, len, output, i);
      push(output, formatProperty(ctx, value, recurseTimes, i, kArrayType));
    }
    if (remaining > 0) push(output, `... ${remaining} more item${remaining > 1 ? 's' : ''}`);
    return output;
  }

  function formatSpecialArray(ctx, value, recurseTimes, maxLength, output, i) {
    const keys = objectKeys(value);
    let index = i;
    for (; i < keys.length && output.length < maxLength; i++) {
      const key = keys[i];
      const tmp = +key;
      if (tmp > 2 ** 32 - 2) break;
      if (`${index}` !== key) {
        if (call(regexpExec, numberKey, key) === null) break;
        const emptyItems = tmp - index;
        push(output, `<${emptyItems} empty item${emptyItems > 1 ? 's' : ''}>`);
        index = tmp;
        if (output.length === maxLength) break;
      }
      push(output, formatProperty(ctx, value, recurseTimes, key, kArrayType));
      index++;
    }
    const remaining = value.length - index;
    if (output.length !== maxLength) {
      if (remaining > 0) push(output, `<${remaining} empty item${remaining > 1 ? 's' : ''}>`);
    } else if (remaining > 0) {
      push(output, `... ${remaining} more item${remaining > 1 ? 's' : ''}`);
    }
    return output;
  }

  function formatTypedArray(ctx, value, recurseTimes) {
    const length = call(typedArrayLength, value);
    const maxLength = mathMin(MAX_ARRAY_LENGTH, length);
    const remaining = length - maxLength;
    const output = [];
    for (let i = 0; i < maxLength; i++) push(output, formatPrimitive(value[i], ctx));
    if (remaining > 0) push(output, `... ${remaining} more item${remaining > 1 ? 's' : ''}`);
    return output;
  }

  function formatSet(ctx, value, recurseTimes) {
    const length = call(setSize, value);
    const maxLength = mathMin(MAX_ARRAY_LENGTH, length);
    const remaining = length - maxLength;
    const output = [];
    ctx.indentationLvl += 2;
    const it = call(setValues, value);
    for (let i = 0; i < maxLength; i++) {
      const step = call(setIterNext, it);
      if (step.done) break;
      push(output, formatValue(ctx, step.value, recurseTimes));
    }
    if (remaining > 0) push(output, `... ${remaining} more item${remaining > 1 ? 's' : ''}`);
    ctx.indentationLvl -= 2;
    return output;
  }

  function formatMap(ctx, value, recurseTimes) {
    const length = call(mapSize, value);
    const maxLength = mathMin(MAX_ARRAY_LENGTH, length);
    const remaining = length - maxLength;
    const output = [];
    ctx.indentationLvl += 2;
    const it = call(mapEntries, value);
    for (let i = 0; i < maxLength; i++) {
      const step = call(mapIterNext, it);
      if (step.done) break;
      const k = step.value[0];
      const v = step.value[1];
      push(output, `${formatValue(ctx, k, recurseTimes)} => ${formatValue(ctx, v, recurseTimes)}`);
    }
    if (remaining > 0) push(output, `... ${remaining} more item${remaining > 1 ? 's' : ''}`);
    ctx.indentationLvl -= 2;
    return output;
  }

  function formatPromise(ctx, value, recurseTimes) {
    const state = promiseState(value);
    if (state === undefined || state[0] === 0) return ['<pending>'];
    ctx.indentationLvl += 2;
    const str = formatValue(ctx, state[1], recurseTimes);
    ctx.indentationLvl -= 2;
    return [state[0] === 2 ? `<rejected> ${str}` : str];
  }

  function groupArrayElements(ctx, output, value) {
    let totalLength = 0;
    let maxLength = 0;
    let i = 0;
    let outputLength = output.length;
    if (MAX_ARRAY_LENGTH < output.length) outputLength--;
    const separatorSpace = 2;
    const dataLen = [];
    for (; i < outputLength; i++) {
      const len = output[i].length;
      dataLen[i] = len;
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + separatorSpace;
    if (actualMax * 3 + ctx.indentationLvl < BREAK_LENGTH && (totalLength / actualMax > 5 || maxLength <= 6)) {
      const approxCharHeights = 2.5;
      const averageBias = mathSqrt(actualMax - totalLength / output.length);
      const biasedMax = mathMax(actualMax - 3 - averageBias, 1);
      const columns = mathMin(
        mathRound(mathSqrt(approxCharHeights * biasedMax * outputLength) / biasedMax),
        mathFloor((BREAK_LENGTH - ctx.indentationLvl) / actualMax),
        COMPACT * 4,
        15,
      );
      if (columns <= 1) return output;
      const tmp = [];
      const maxLineLength = [];
      for (let c = 0; c < columns; c++) {
        let lineLength = 0;
        for (let j = c; j < output.length; j += columns) if (dataLen[j] > lineLength) lineLength = dataLen[j];
        push(maxLineLength, lineLength + separatorSpace);
      }
      let padStart = true;
      if (value !== undefined) {
        for (let k = 0; k < output.length; k++) {
          if (typeof value[k] !== 'number' && typeof value[k] !== 'bigint') { padStart = false; break; }
        }
      }
      for (let k = 0; k < outputLength; k += columns) {
        const max = mathMin(k + columns, outputLength);
        let str = '';
        let j = k;
        for (; j < max - 1; j++) {
          const padding = maxLineLength[j - k];
          str += call(padStart ? stringPadStart : stringPadEnd, `${output[j]}, `, padding, ' ');
        }
        if (padStart) {
          const padding = maxLineLength[j - k] - separatorSpace;
          str += call(stringPadStart, output[j], padding, ' ');
        } else {
          str += output[j];
        }
        push(tmp, str);
      }
      if (MAX_ARRAY_LENGTH < output.length) push(tmp, output[outputLength]);
      output = tmp;
    }
    return output;
  }

  function isBelowBreakLength(ctx, output, start, base) {
    let totalLength = output.length + start;
    if (totalLength + output.length > BREAK_LENGTH) return false;
    for (let i = 0; i < output.length; i++) {
      totalLength += output[i].length;
      if (totalLength > BREAK_LENGTH) return false;
    }
    return base === '' || !includes(base, '\n');
  }

  function join(output, separator) {
    let str = '';
    for (let i = 0; i < output.length; i++) str += (i === 0 ? '' : separator) + output[i];
    return str;
  }

  function reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value) {
    const entries = output.length;
    if (extrasType === kArrayExtrasType && entries > 6) output = groupArrayElements(ctx, output, value);
    if (ctx.currentDepth - recurseTimes < COMPACT && entries === output.length) {
      const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
      if (isBelowBreakLength(ctx, output, start, base)) {
        const joined = join(output, ', ');
        if (!includes(joined, '\n')) return `${base ? `${base} ` : ''}${braces[0]} ${joined} ${braces[1]}`;
      }
    }
    const indentation = `\n${repeat(' ', ctx.indentationLvl)}`;
    return `${base ? `${base} ` : ''}${braces[0]}${indentation}  ${join(output, `,${indentation}  `)}${indentation}${braces[1]}`;
  }

  function inspect(value) {
    const ctx = { seen: [], circular: undefined, indentationLvl: 0, currentDepth: 0 };
    return formatValue(ctx, value, 0);
  }

  function wellFormed(text) {
    return typeof stringToWellFormed === 'function' ? call(stringToWellFormed, text) : text;
  }

  function makeConsole() {
    const shim = objectCreate(null);
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      shim[level] = (...args) => {
        let text = '';
        for (let i = 0; i < args.length; i++) {
          const arg = args[i];
          if (i > 0) text += ' ';
          text += typeof arg === 'string' ? arg : inspect(arg);
        }
        emit(wellFormed(text));
      };
    }
    return shim;
  }

  /** A minimal `process`: `stdout`/`stderr` whose `write` is captured as one log entry per call
   * (upstream `captureStreamWrites`, callback run as a microtask), and an empty `env`. */
  function makeProcess() {
    const stream = () => {
      const s = objectCreate(null);
      s.write = (chunk, ...rest) => {
        emit(wellFormed(typeof chunk === 'string' ? chunk : StringCtor(chunk)));
        const callback = typeof rest[0] === 'function' ? rest[0] : typeof rest[1] === 'function' ? rest[1] : undefined;
        if (callback) queueMicrotaskFn(() => { callback(null); });
        return true;
      };
      return s;
    };
    const exit = (code) => {
      exitHost(code === undefined ? 0 : Number(code) | 0);
      for (;;) { /* interrupted by the host: the run is over */ }
    };
    return { stdout: stream(), stderr: stream(), env: {}, exit };
  }
  const queueMicrotaskFn = (fn) => { call(promiseThen, promiseResolve(undefined), () => fn()); };
  const promiseThen = Promise.prototype.then;
  const promiseResolve = (v) => call(Promise.resolve, Promise, v);

  function makeErrorClass(name, member) {
    const define = (target, key, value) => {
      const attributes = objectCreate(null);
      attributes.enumerable = true;
      attributes.value = value;
      defineProperty(target, key, attributes);
    };
    return class BindingCallError extends ErrorCtor {
      constructor(memberName, message) {
        super(message);
        define(this, 'name', name);
        define(this, member, memberName);
      }
    };
  }

  const TypeErrorProto = TypeError.prototype;
  const stringSplit = String.prototype.split;
  const isIdentChar = (c) => c !== undefined && call(regexpExec, /[A-Za-z0-9_$]/, c) !== null;

  /** QuickJS says `not a function` where V8 names the callee (`tools.nope is not a function`): recover a
   * dotted callee from the program text at the throw site (the first `<input>` frame) and name it. */
  function nameCallee(err) {
    try {
      if (!inChain(err, TypeErrorProto) || err.message !== 'not a function' || typeof host.source !== 'string') return;
      const stack = err.stack;
      if (typeof stack !== 'string') return;
      const frame = call(regexpExec, /^\s*at [^\n]*?\(<input>:(\d+):(\d+)\)/, stack);
      if (frame === null) return;
      const lines = call(stringSplit, host.source, '\n');
      // The engine's AsyncFunction source has two lines before the body ("(async function anonymous(...", ") {").
      let line = +frame[1] - 3;
      let col = +frame[2] - 1;
      let text = lines[line];
      if (text === undefined) return;
      // At an identifier: move to its end; at `(`: step back over blanks (possibly across lines).
      if (isIdentChar(text[col])) {
        while (isIdentChar(text[col + 1])) col++;
      } else {
        col--;
        while (true) {
          while (col >= 0 && (text[col] === ' ' || text[col] === '\t')) col--;
          if (col >= 0 || line === 0) break;
          line--;
          text = lines[line];
          col = text.length - 1;
        }
      }
      let start = col;
      while (start >= 0 && (isIdentChar(text[start]) || text[start] === '.' || (text[start] === '?' && text[start + 1] === '.'))) start--;
      const callee = slice(text, start + 1, col + 1);
      if (callee === '' || !isIdentChar(callee[0]) || call(regexpExec, /^[0-9]/, callee) !== null) return;
      const attributes = objectCreate(null);
      attributes.value = `${callee} is not a function`;
      attributes.writable = true;
      attributes.configurable = true;
      defineProperty(err, 'message', attributes);
    } catch {}
  }

  function describeThrown(error) {
    try {
      nameCallee(error);
      const detail = isError(error) ? (stackOf(error) ?? error.message) : error;
      return wellFormed(typeof detail === 'string' ? detail : StringCtor(detail));
    } catch {
      return 'program threw an unrenderable value';
    }
  }

  return { inspect, makeConsole, makeProcess, makeErrorClass, describeThrown, ErrorCtor };
}
