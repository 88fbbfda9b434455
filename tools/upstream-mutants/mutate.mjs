// Lists and applies single-operator mutants of JavaScript files (issue 37 item 4: the suite measured
// against mutants of upstream itself). Our own mutator, with acorn for the syntax tree, rather than
// StrykerJS: Stryker is built for a project's own sources (node_modules stays out of its sandbox) while
// upstream is only an installed package, and an own mutator gives a seeded sample of one process each.
//
//   node mutate.mjs list FILE...                  every mutant, one JSON object a line
//   node mutate.mjs sample N SEED FILE...         N of them, a seeded uniform sample (same seed, same sample)
//   node mutate.mjs apply MUTANT_JSON OUT         writes the mutated text of the mutant's file to OUT
//
// A mutant is { id, file, line, column, start, end, operator, original, replacement }: the text between
// the byte offsets start..end of the file (UTF-16 offsets, as acorn gives them) becomes `replacement`.
// The operators are the usual ones of mutation testing (Stryker's set, less the regex and method ones):
// equality, relational, arithmetic, logical and assignment operators swapped, `!` and unary minus removed,
// ++/-- swapped, booleans flipped, conditions forced true/false, block bodies emptied, strings emptied,
// array/object literals emptied, optional chaining made plain.

import { readFileSync, writeFileSync } from "node:fs";
import { parse } from "acorn";
import { pathToFileURL } from "node:url";

const BINARY = {
  "===": ["!=="], "!==": ["==="], "==": ["!="], "!=": ["=="],
  "<": ["<=", ">="], "<=": ["<", ">"], ">": [">=", "<="], ">=": [">", "<"],
  "+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"], "%": ["*"],
};
const LOGICAL = { "&&": ["||"], "||": ["&&"], "??": ["&&"] };
const ASSIGN = { "+=": ["-="], "-=": ["+="], "||=": ["&&="], "&&=": ["||="], "??=": ["&&="] };

/** Every mutant of one file's text. */
export function mutantsOf(file, text) {
  const ast = parse(text, { ecmaVersion: "latest", sourceType: "module", locations: true });
  const found = [];
  const add = (node, operator, start, end, replacement) => {
    const original = text.slice(start, end);
    if (original === replacement) return;
    found.push({ file, line: node.loc.start.line, column: node.loc.start.column, start, end, operator, original, replacement });
  };
  // The operator token of a binary/logical/assignment node: the first occurrence of it after the left side.
  const operatorAt = (node, op) => {
    const from = node.left.end;
    const at = text.indexOf(op, from);
    return at >= 0 && at < node.right.start ? at : -1;
  };
  const visit = (node, parent, key) => {
    if (!node || typeof node.type !== "string") return;
    switch (node.type) {
      case "ImportDeclaration": case "ExportAllDeclaration":
        return; // module plumbing: a broken import is a start-up crash, not a behaviour
      case "BinaryExpression": case "LogicalExpression": case "AssignmentExpression": {
        const table = node.type === "BinaryExpression" ? BINARY : node.type === "LogicalExpression" ? LOGICAL : ASSIGN;
        const at = table[node.operator] ? operatorAt(node, node.operator) : -1;
        if (at >= 0) {
          for (const r of table[node.operator]) add(node, `${node.type}`, at, at + node.operator.length, r);
        }
        break;
      }
      case "UnaryExpression":
        if (node.operator === "!" || node.operator === "-") {
          add(node, "UnaryOperator", node.start, node.argument.start, "");
        }
        break;
      case "UpdateExpression":
        add(node, "UpdateOperator", node.start, node.end,
          text.slice(node.start, node.end).replace(node.operator, node.operator === "++" ? "--" : "++"));
        break;
      case "Literal":
        if (typeof node.value === "boolean") add(node, "BooleanLiteral", node.start, node.end, String(!node.value));
        else if (typeof node.value === "string" && !isKeyOrDirective(node, parent, key)) {
          add(node, "StringLiteral", node.start, node.end, node.value === "" ? '"Stryker was here!"' : '""');
        }
        break;
      case "TemplateLiteral":
        if (parent?.type !== "TaggedTemplateExpression" && text.slice(node.start, node.end) !== "``") {
          add(node, "StringLiteral", node.start, node.end, "``");
        }
        break;
      case "ConditionalExpression": case "IfStatement":
        add(node.test, "ConditionalExpression", node.test.start, node.test.end, "true");
        add(node.test, "ConditionalExpression", node.test.start, node.test.end, "false");
        break;
      case "WhileStatement": case "DoWhileStatement":
        add(node.test, "ConditionalExpression", node.test.start, node.test.end, "false");
        break;
      case "ForStatement":
        if (node.test) add(node.test, "ConditionalExpression", node.test.start, node.test.end, "false");
        break;
      case "BlockStatement":
        if (node.body.length > 0 && isFunction(parent)) add(node, "BlockStatement", node.start, node.end, "{}");
        break;
      case "ArrayExpression":
        if (node.elements.length > 0) add(node, "ArrayDeclaration", node.start, node.end, "[]");
        break;
      case "ObjectExpression":
        if (node.properties.length > 0) add(node, "ObjectLiteral", node.start, node.end, "{}");
        break;
      case "MemberExpression": case "CallExpression":
        if (node.optional) {
          const anchor = node.type === "MemberExpression" ? node.object.end : node.callee.end;
          const at = text.indexOf("?.", anchor);
          if (at >= 0) add(node, "OptionalChaining", at, at + 2, node.type === "MemberExpression" && !node.computed ? "." : "");
        }
        break;
    }
    for (const [k, child] of Object.entries(node)) {
      if (k === "loc") continue;
      if (Array.isArray(child)) child.forEach((c) => visit(c, node, k));
      else if (child && typeof child === "object") visit(child, node, k);
    }
  };
  visit(ast, null, null);
  return found;
}

function isFunction(node) {
  return node && /Function/.test(node.type);
}

/** Object keys, `"use strict"` and import/export sources are not data the program computes. */
function isKeyOrDirective(node, parent, key) {
  if (!parent) return false;
  if ((parent.type === "Property" || parent.type === "PropertyDefinition" || parent.type === "MethodDefinition") && key === "key") return true;
  if (parent.type === "ExpressionStatement" && parent.directive) return true;
  if (/Import|Export/.test(parent.type) && key === "source") return true;
  return false;
}

/** Every mutant of `files`, numbered in file order. */
export function listAll(files) {
  const all = files.flatMap((file) => mutantsOf(file, readFileSync(file, "utf8")));
  return all.map((m, i) => ({ id: i, ...m }));
}

/** A seeded uniform sample of `n` mutants (mulberry32, partial Fisher-Yates): same seed, same sample. */
export function sample(all, n, seed) {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pool = all.slice();
  const take = Math.min(n, pool.length);
  for (let i = 0; i < take; i++) {
    const j = i + Math.floor(random() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, take).sort((a, b) => a.id - b.id);
}

/** The mutated text of the mutant's file. */
export function apply(mutant) {
  const text = readFileSync(mutant.file, "utf8");
  if (text.slice(mutant.start, mutant.end) !== mutant.original) {
    throw new Error(`mutant ${mutant.id}: ${mutant.file} changed since it was listed (expected ${JSON.stringify(mutant.original)} at ${mutant.start})`);
  }
  return text.slice(0, mutant.start) + mutant.replacement + text.slice(mutant.end);
}

const main = process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href;
const [command, ...args] = main ? process.argv.slice(2) : [];
if (command === "list") {
  for (const m of listAll(args)) process.stdout.write(JSON.stringify(m) + "\n");
} else if (command === "sample") {
  const [n, seed, ...files] = args;
  for (const m of sample(listAll(files), Number(n), Number(seed))) process.stdout.write(JSON.stringify(m) + "\n");
} else if (command === "apply") {
  writeFileSync(args[1], apply(JSON.parse(args[0])));
} else if (command !== undefined) {
  process.stderr.write(`mutate.mjs: unknown command ${command} (list, sample, apply)\n`);
  process.exit(2);
}
