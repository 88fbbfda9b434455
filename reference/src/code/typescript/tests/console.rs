//! The console shim's formatting, line for line as upstream (rc.8, Node 24 `util.inspect`) printed the same
//! programs. Split from `tests.rs` (its helpers are `super`'s).
//!
//! Spec: RUN-026.

use super::*;

/// Each line as upstream (rc.8, Node 24 `util.inspect`) printed it for the same program.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_formats_like_upstream() {
    let program = r#"
console.log("got", {x: 1}, [1, 2], "s");
console.log({a: {b: {c: {d: {e: {f: 1}}}}}});
console.log(new Map([[1, 2], ["a", {b: 1}]]), new Set([1, "x"]));
console.log(-0, 1n, undefined, null, true, 1.5, NaN, -Infinity, 1e21, 2**60);
console.log({s: 'it\'s', t: "q\"", n: "a\nb"}, ['x']);
function f() {} const g = () => 1; class K { constructor() { this.v = 1; } } class Empty {}
console.log(f, g, K, new K(), new Empty(), async function af() {}, function* gen() {});
console.info([undefined, null, , 3]);
console.warn({}, [], Object.create(null), {__proto__: null, a: 1});
console.debug(Symbol("s"), {[Symbol("k")]: 1, 'a-b': 2, 1: 3, valid_id: 4});
console.log(Array.from({length: 120}, (_, i) => i));
console.log({arr: [[1, [2, [3, [4, [5]]]]]]});
console.log(new Date(0), /re/g, new Uint8Array(2));
const c = {a: 1}; c.self = c; console.log(c);
console.log({get x() { return 1; }, set y(v) {}});
console.log("a".repeat(3), ["a".repeat(20)], {long: "x".repeat(90)});
console.log({a: 1, b: 'two', c: [1, 2, 3], d: {e: 'f'}, g: null, h: undefined, i: true, j: 'jjjjjjjjjjjjjjjjjjj'});
console.log(Promise.resolve(1), new WeakMap(), [function named() {}]);
console.log(new (class Foo extends Map {})([[1,2]]));
console.log(new Boolean(true), new Number(3), new String("ab"));
console.log([1.5, -0, 0], {'': 1});
console.log(Object.create({inherited: 1}));
console.log(tools, tools.echo);
console.log([ 'aaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbb', 'cccccccccccccccccccccccc', 'ddddddddddddddddddd' ]);
console.log(Array.from({length: 30}, (_, i) => i * 1000));
console.log({x: [{y: 1}, {z: [1, 2]}]});
console.log(new Set(), new Map(), [[]], [{}]);
console.error(new Error("bad"));
"#;
    let expected = [
        "got { x: 1 } [ 1, 2 ] s",
        "{\n  a: {\n    b: { c: { d: { e: [Object] } } }\n  }\n}",
        "Map(2) { 1 => 2, 'a' => { b: 1 } } Set(2) { 1, 'x' }",
        "-0 1n undefined null true 1.5 NaN -Infinity 1e+21 1152921504606847000",
        "{ s: \"it's\", t: 'q\"', n: 'a\\nb' } [ 'x' ]",
        "[Function: f] [Function: g] [class K] K { v: 1 } Empty {} [AsyncFunction: af] [GeneratorFunction: gen]",
        "[ undefined, null, <1 empty item>, 3 ]",
        "{} [] [Object: null prototype] {} [Object: null prototype] { a: 1 }",
        "Symbol(s) { '1': 3, 'a-b': 2, valid_id: 4, Symbol(k): 1 }",
        "[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11,\n  12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,\n  24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n  36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,\n  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,\n  60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n  72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83,\n  84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,\n  96, 97, 98, 99,\n  ... 20 more items\n]",
        "{\n  arr: [\n    [ 1, [ 2, [ 3, [Array] ] ] ]\n  ]\n}",
        "1970-01-01T00:00:00.000Z /re/g Uint8Array(2) [ 0, 0 ]",
        "<ref *1> { a: 1, self: [Circular *1] }",
        "{ x: [Getter], y: [Setter] }",
        "aaa [ 'aaaaaaaaaaaaaaaaaaaa' ] {\n  long: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'\n}",
        "{\n  a: 1,\n  b: 'two',\n  c: [ 1, 2, 3 ],\n  d: { e: 'f' },\n  g: null,\n  h: undefined,\n  i: true,\n  j: 'jjjjjjjjjjjjjjjjjjj'\n}",
        "Promise { 1 } WeakMap { <items unknown> } [ [Function: named] ]",
        "Foo(1) [Map] { 1 => 2 }",
        "[Boolean: true] [Number: 3] [String: 'ab']",
        "[ 1.5, -0, 0 ] { '': 1 }",
        "{}",
        "[Object: null prototype] {\n  echo: [Function: value],\n  fail: [Function: value],\n  negz: [Function: value],\n  slow: [Function: value]\n} [Function: value]",
        "[\n  'aaaaaaaaaaaaaaaaaaaaa',\n  'bbbbbbbbbbbbbbbbbbbbbbbbb',\n  'cccccccccccccccccccccccc',\n  'ddddddddddddddddddd'\n]",
        "[\n      0,  1000,  2000,  3000,  4000,\n   5000,  6000,  7000,  8000,  9000,\n  10000, 11000, 12000, 13000, 14000,\n  15000, 16000, 17000, 18000, 19000,\n  20000, 21000, 22000, 23000, 24000,\n  25000, 26000, 27000, 28000, 29000\n]",
        "{\n  x: [ { y: 1 }, { z: [ 1, 2 ] } ]\n}",
        "Set(0) {} Map(0) {} [ [] ] [ {} ]",
    ];
    let result = run(program).await;
    assert_eq!(result.error, None);
    let (stack, logs) = result.logs.split_last().unwrap();
    for (got, want) in logs.iter().zip(expected) {
        assert_eq!(got, want);
    }
    assert_eq!(logs.len(), expected.len());
    // An error prints its stack (frames are the engine's own).
    assert!(stack.starts_with("Error: bad\n    at "), "{stack}");
}

/// More `util.inspect` cases, each line as upstream printed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_formats_like_upstream_more() {
    // Upstream's line for `['y'.repeat(10003)]`: the string cut at maxStringLength.
    let long_string_line = format!("[\n  '{}'... 3 more characters\n]", "y".repeat(10_000));

    let program = r#"console.log(new Error("outer", { cause: new Error("inner") }).cause.message);
console.log({a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8});
console.log(['x'.repeat(30), 'y'.repeat(30), 'z'.repeat(30)]);
console.log({text: "line one\nline two\nline three which is long enough to split the string"});
console.log(["a\nb"]);
console.log([-1, 20, -300, 4000, 5, 6, 7, 8]);
console.log([1, 'a', 2, 'bb', 3, 'ccc', 4, 'dddd']);
console.log(Object.assign([1, 2], {x: 1}));
console.log([1n, 2n, 3n, 4n, 5n, 6n, 7n]);
console.log([, , 1, , ]);
console.log([Symbol('a'), Symbol.iterator]);
console.log({[Symbol.toStringTag]: 'Custom', a: 1});
class T { get [Symbol.toStringTag]() { return 'Tagged'; } }
console.log(new T());
console.log(Object.assign(new Number(5), {k: 1}));
console.log(new Date(NaN));
function withProps() {} withProps.x = 1; console.log(withProps);
class Base {} class Derived extends Base {} console.log(Derived, class {}, new Derived());
function fb() {} console.log(fb.bind(null), (() => {}), function () {});
console.log({n: {__proto__: null, x: {}}});
console.log(Object.freeze({a: [1]}));
(function () { console.log(arguments); })(1, 2);
console.log([{a: 1, b: 2}, {a: 3, b: 4}, {a: 5, b: 6}, {a: 7, b: 8}]);
console.log(new Map([[{a: 1}, [1, 2]], ['k', new Set([1])]]));
console.log('x'.repeat(10005).length, ['y'.repeat(10003)].toString().length);
console.log(['y'.repeat(10003)]);
console.log([0.1, 0.2, 1e-7, 123456789012, -5e-324]);
console.log({ 'key with space': 1, 'ünï': 2, $dollar: 3, _u: 4, '0x': 5 });
console.log([[1, 2, [3, 4, [5, 6, [7, 8, [9]]]]]]);
console.log(new Array(5));
console.log([undefined, , null]);
console.log(Object.create(Array.prototype));
console.log({ f() {}, async g() {}, *h() {} });
console.log(new Proxy({a: 1}, {}));
console.log([new Error('in array')].length, typeof Symbol());
console.log(String(Symbol('d')), [null, undefined].join('-'));
console.log("%s %d", "fmt", 5);
console.log(globalThis === this, typeof globalThis);
"#;
    let expected = [
        "inner",
        "{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8 }",
        "[\n  'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',\n  'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy',\n  'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'\n]",
        "{\n  text: 'line one\\nline two\\nline three which is long enough to split the string'\n}",
        "[ 'a\\nb' ]",
        "[\n  -1, 20, -300, 4000,\n   5,  6,    7,    8\n]",
        "[\n  1,    'a',    2,\n  'bb', 3,      'ccc',\n  4,    'dddd'\n]",
        "[ 1, 2, x: 1 ]",
        "[\n  1n, 2n, 3n, 4n,\n  5n, 6n, 7n\n]",
        "[ <2 empty items>, 1, <1 empty item> ]",
        "[ Symbol(a), Symbol(Symbol.iterator) ]",
        "{ a: 1, Symbol(Symbol.toStringTag): 'Custom' }",
        "T [Tagged] {}",
        "[Number: 5] { k: 1 }",
        "Invalid Date",
        "[Function: withProps] { x: 1 }",
        "[class Derived extends Base] [class (anonymous)] Derived {}",
        "[Function: bound fb] [Function (anonymous)] [Function (anonymous)]",
        "{ n: [Object: null prototype] { x: {} } }",
        "{ a: [ 1 ] }",
        "[Arguments] { '0': 1, '1': 2 }",
        "[ { a: 1, b: 2 }, { a: 3, b: 4 }, { a: 5, b: 6 }, { a: 7, b: 8 } ]",
        "Map(2) { { a: 1 } => [ 1, 2 ], 'k' => Set(1) { 1 } }",
        "10005 10003",
        long_string_line.as_str(),
        "[ 0.1, 0.2, 1e-7, 123456789012, -5e-324 ]",
        "{ 'key with space': 1, 'ünï': 2, '$dollar': 3, _u: 4, '0x': 5 }",
        "[\n  [\n    1,\n    2,\n    [ 3, 4, [ 5, 6, [ 7, 8, [Array] ] ] ]\n  ]\n]",
        "[ <5 empty items> ]",
        "[ undefined, <1 empty item>, null ]",
        "Array {}",
        "{ f: [Function: f], g: [AsyncFunction: g], h: [GeneratorFunction: h] }",
        "{ a: 1 }",
        "1 symbol",
        "Symbol(d) -",
        "%s %d fmt 5",
        "false object"
    ];
    let result = run(program).await;
    assert_eq!(result.error, None);
    for (got, want) in result.logs.iter().zip(expected) {
        assert_eq!(got, want);
    }
    assert_eq!(result.logs.len(), expected.len());
}
