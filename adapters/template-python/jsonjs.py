"""JSON the way the harness and JavaScript see it, standard library only, with no depth limit.

`loads` and `dumps` use explicit stacks (Python's `json` module recurses and fails near 1,000 levels;
the suite sends values 100,000 levels deep). Numbers follow JavaScript: `-0` parses to the float -0.0
and every number is a double; `dumps` writes numbers as `JSON.stringify` does (`1.0` -> `1`, `-0` -> `0`,
`1e-7`, `1e+21`, `0.000001`, non-finite -> `null`) and object keys in JavaScript's property order
(array-index keys first, ascending, then the others in insertion order).
"""

import json
import math
import re

_NUMBER = re.compile(r'-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?')
_WS = re.compile(r'[ \t\n\r]*')
_scanstring = json.decoder.scanstring
_MAX_SAFE = 2 ** 53


class JsonError(ValueError):
    """A line that is not JSON."""


def loads(text):
    """Parses one JSON text without recursion."""
    pos = _WS.match(text, 0).end()
    stack = []  # containers being filled: (container, pending key or None)
    value = None
    while True:
        if pos >= len(text):
            raise JsonError('unexpected end of input')
        c = text[pos]
        if c == '{' or c == '[':
            container = {} if c == '{' else []
            pos = _WS.match(text, pos + 1).end()
            if pos < len(text) and text[pos] == ('}' if c == '{' else ']'):
                value, pos = container, pos + 1
            else:
                if c == '{':
                    key, pos = _key(text, pos)
                    stack.append([container, key])
                else:
                    stack.append([container, None])
                continue
        elif c == '"':
            value, pos = _scanstring(text, pos + 1)
        elif text.startswith('true', pos):
            value, pos = True, pos + 4
        elif text.startswith('false', pos):
            value, pos = False, pos + 5
        elif text.startswith('null', pos):
            value, pos = None, pos + 4
        else:
            m = _NUMBER.match(text, pos)
            if not m:
                raise JsonError('unexpected character %r at %d' % (c, pos))
            value, pos = _number(m.group()), m.end()
        # Place `value` into its parent, closing every container that ends here.
        while True:
            pos = _WS.match(text, pos).end()
            if not stack:
                if pos != len(text):
                    raise JsonError('trailing characters at %d' % pos)
                return value
            container, key = stack[-1]
            if key is None:
                container.append(value)
            else:
                container[key] = value
            if pos >= len(text):
                raise JsonError('unexpected end of input')
            c = text[pos]
            if c == ',':
                pos = _WS.match(text, pos + 1).end()
                if key is not None:
                    stack[-1][1], pos = _key(text, pos)
                break
            if c == ('}' if key is not None else ']'):
                stack.pop()
                value, pos = container, pos + 1
                continue
            raise JsonError('expected , or a closing bracket at %d' % pos)


def _key(text, pos):
    if pos >= len(text) or text[pos] != '"':
        raise JsonError('expected a key at %d' % pos)
    key, pos = _scanstring(text, pos + 1)
    pos = _WS.match(text, pos).end()
    if pos >= len(text) or text[pos] != ':':
        raise JsonError('expected : at %d' % pos)
    return key, _WS.match(text, pos + 1).end()


def _number(s):
    if s == '-0':
        return -0.0
    if '.' in s or 'e' in s or 'E' in s:
        return float(s)
    n = int(s)
    return n if -_MAX_SAFE <= n <= _MAX_SAFE else float(n)


def number(x):
    """A number as JavaScript's `JSON.stringify` writes it."""
    if isinstance(x, bool):
        return 'true' if x else 'false'
    if isinstance(x, int):
        return str(x) if -_MAX_SAFE <= x <= _MAX_SAFE else number(float(x))
    if math.isnan(x) or math.isinf(x):
        return 'null'
    if x == 0:
        return '0'
    sign = '-' if x < 0 else ''
    s = repr(abs(x))  # the shortest round-trip digits, as JavaScript picks them
    mantissa, _, exp = s.partition('e')
    whole, _, frac = mantissa.partition('.')
    digits = (whole + frac).lstrip('0')
    scale = int(exp or 0) - len(frac)
    stripped = digits.rstrip('0')
    scale += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + scale  # value = 0.digits * 10^n
    if k <= n <= 21:
        return sign + digits + '0' * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + '.' + digits[n:]
    if -6 < n <= 0:
        return sign + '0.' + '0' * (-n) + digits
    e = n - 1
    tail = ('e+' if e >= 0 else 'e-') + str(abs(e))
    return sign + (digits if k == 1 else digits[0] + '.' + digits[1:]) + tail


_LONE_SURROGATE = re.compile('[\ud800-\udfff]')


def string(s):
    """A string as `JSON.stringify` writes it (lone surrogates escaped, the rest as is)."""
    out = json.dumps(s, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: '\\u%04x' % ord(m.group()), out)


def _is_index(key):
    return key.isdigit() and (key == '0' or key[0] != '0') and int(key) < 2 ** 32 - 1


def js_keys(obj):
    """The keys of a dict in JavaScript's property order."""
    keys = list(obj)
    index = sorted((k for k in keys if _is_index(k)), key=int)
    if not index:
        return keys
    return index + [k for k in keys if not _is_index(k)]


def dumps(value):
    """Writes a value without recursion (see the module doc for numbers and key order)."""
    out = []
    stack = [(value, None)]
    while stack:
        v, state = stack.pop()
        if isinstance(state, str):  # a literal to write
            out.append(state)
            continue
        if v is None:
            out.append('null')
        elif v is True or v is False or isinstance(v, (int, float)):
            out.append(number(v))
        elif isinstance(v, str):
            out.append(string(v))
        elif isinstance(v, dict):
            keys = js_keys(v)
            out.append('{')
            stack.append((None, '}'))
            for i in range(len(keys) - 1, -1, -1):
                stack.append((v[keys[i]], None))
                stack.append((None, ('' if i == 0 else ',') + string(keys[i]) + ':'))
        elif isinstance(v, (list, tuple)):
            out.append('[')
            stack.append((None, ']'))
            for i in range(len(v) - 1, -1, -1):
                stack.append((v[i], None))
                if i:
                    stack.append((None, ','))
        else:
            raise TypeError('cannot write %r as JSON' % (v,))
    return ''.join(out)


if __name__ == '__main__':
    # Self-check: python3 jsonjs.py
    for x, want in [(1.0, '1'), (-0.0, '0'), (1e21, '1e+21'), (1e-7, '1e-7'), (0.000001, '0.000001'),
                    (123456789012345680000.0, '123456789012345680000'), (1.5e300, '1.5e+300'), (0.1, '0.1'),
                    (-2.5e-8, '-2.5e-8'), (float('nan'), 'null'), (2 ** 60, '1152921504606847000')]:
        assert number(x) == want, (x, number(x), want)
    deep = '[' * 100000 + ']' * 100000
    assert dumps(loads(deep)) == deep
    assert dumps(loads('{"b":1,"2":2,"a":-0,"1":[true,null,"\\u00e9"]}')) == '{"1":[true,null,"é"],"2":2,"b":1,"a":0}'
    assert str(loads('-0')) == '-0.0'
    print('jsonjs: ok')
