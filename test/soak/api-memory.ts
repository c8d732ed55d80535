/**
 * `tsx test/soak/api-memory.ts`: what the API's own memory is made of under the soak's mix
 * (lists, lookups, uploads, PDFs; test/soak/soak.ts) on the embedded profile, started as
 * `pnpm start` starts it (the built `packages/service/api.js`; run `pnpm build` first).
 * Samples the API process's own RSS (/proc/<pid>/smaps_rollup), and apart from it that of its
 * children (Chromium) by RSS and PSS; from a preloaded probe, process.memoryUsage() and V8's heap
 * spaces; at the end writes a heap snapshot (`--heapsnapshot-signal=SIGUSR2`) unless MEMORY_SNAPSHOT=0.
 * docs/operate/capacity.md quotes it ("Memory of the API process").
 *
 * Knobs: MEMORY_SEED (the bench's SQLite seed of that size, e.g. `10k`, under .tmp/bench, reused;
 * the PDFs then go through up to 5,000 of its invoices; default: the tests' fixture), MEMORY_TSX=1
 * (the sources through tsx, as the soak starts them), MEMORY_MINUTES (3), MEMORY_RATE (20 requests/s),
 * MEMORY_NODE_ARGS (extra Node flags, space-separated: Node refuses some in NODE_OPTIONS),
 * MEMORY_ENV (extra env for the API, `A=1,B=2`), MEMORY_OUT (.tmp/api-memory/<stamp>).
 * Prints a JSON summary: medians over the last third of the run, in MiB.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, watch, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createKnex, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { loadBenchConfig, parseSize } from '../bench/config.js';
import { prepareSqlite } from '../bench/seed.js';
import { DIRS, KEYS, testFixture } from '../support/test-fixture.js';
import { LIST_QUERIES, PDF_BYTES } from './soak-mix.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MINUTES = Number(process.env.MEMORY_MINUTES ?? 3);
const RATE = Number(process.env.MEMORY_RATE ?? 20);
const OUT = process.env.MEMORY_OUT ?? path.join(ROOT, '.tmp/api-memory', new Date().toISOString().replace(/[:.]/g, '-'));
const NODE_ARGS = (process.env.MEMORY_NODE_ARGS ?? '').split(' ').filter(Boolean);
const EXTRA_ENV = Object.fromEntries(
  (process.env.MEMORY_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
// The API as `pnpm start` runs it, or (MEMORY_TSX=1) as the soak runs it: the sources through tsx.
const ENTRY = process.env.MEMORY_TSX === '1' ? ['--import', 'tsx', path.join(ROOT, 'packages/api/src/main.ts')] : [path.join(ROOT, 'packages/service/api.js')];
const MAX_IN_FLIGHT = 64;
const MiB = 2 ** 20;
/** Preloaded into the API (`node --import`): process.memoryUsage() and V8's heap spaces, one JSON line to MEMORY_PROBE_FILE every 5 s. */
const PROBE = [
  "import { appendFileSync } from 'node:fs';",
  "import v8 from 'node:v8';",
  'const file = process.env.MEMORY_PROBE_FILE;',
  'const write = () => {',
  '  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]));',
  '  appendFileSync(file, JSON.stringify({ at: Date.now(), ...process.memoryUsage(), spaces }) + "\\n");',
  '};',
  'setInterval(write, 5000).unref();',
  'write();',
].join('\n');

let headers: Record<string, string> = { Authorization: `Bearer ${KEYS.baltic}`, 'X-Client-Directory': DIRS.baltic };
let INVOICES: number[] = testFixture.invoices.filter((i) => i.directory === DIRS.baltic).map((i) => i.id);

/** The soak's mix (test/soak/soak.ts); the two PDFs of every 20 requests are of one invoice (a render, then a repeat), the next invoice of the list each time. */
function call(root: string, i: number): Promise<Response> {
  const slot = i % 20;
  const signal = AbortSignal.timeout(60_000);
  if (slot < 12) return fetch(`${root}/v1/invoices${LIST_QUERIES[i % LIST_QUERIES.length]}`, { headers, signal });
  if (slot < 16) {
    const nr = ['0412', 'BH/2026', 'no-such-order', 'ord'][i % 4]!;
    return fetch(`${root}/v1/orders/by-nr?nr=${encodeURIComponent(nr)}`, { headers, signal });
  }
  if (slot < 18) {
    const form = new FormData();
    form.append('files', new Blob([PDF_BYTES, Buffer.from(`soak ${i}`)]), `cmr-${i}.pdf`);
    return fetch(`${root}/v1/orders/3001/files`, { method: 'POST', body: form, headers, signal });
  }
  const id = INVOICES[Math.floor(i / 20) % INVOICES.length];
  return fetch(`${root}/v1/invoices/${id}/pdf?lang=${['en', 'pl', 'de'][Math.floor(i / 20) % 3]}`, { headers, signal });
}

async function rollup(pid: number): Promise<{ rss: number; anon: number; file: number }> {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN) / 1024;
  return { rss: kib('Rss'), anon: kib('Anonymous'), file: kib('Rss') - kib('Anonymous') };
}

/** RSS and PSS of the API's children and their children (Chromium): not the API's own memory, but what a process-tree figure adds. */
async function descendants(pid: number): Promise<{ treeRss: number; treePss: number; children: number }> {
  const parents = new Map<number, number[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone
    }
  }
  const found: number[] = [];
  const queue = [...(parents.get(pid) ?? [])];
  while (queue.length) {
    const next = queue.shift()!;
    found.push(next);
    queue.push(...(parents.get(next) ?? []));
  }
  let treeRss = 0;
  let treePss = 0;
  for (const child of found) {
    try {
      const text = await readFile(`/proc/${child}/smaps_rollup`, 'utf8');
      treeRss += Number(/^Rss:\s+(\d+)/m.exec(text)?.[1] ?? 0) / 1024;
      treePss += Number(/^Pss:\s+(\d+)/m.exec(text)?.[1] ?? 0) / 1024;
    } catch {
      // gone
    }
  }
  return { treeRss, treePss, children: found.length };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

await mkdir(OUT, { recursive: true });
let dataDir: string;
let ownDataDir = false;
if (process.env.MEMORY_SEED) {
  const db = await prepareSqlite(loadBenchConfig(), parseSize(process.env.MEMORY_SEED, 'MEMORY_SEED'));
  dataDir = db.dataDir;
  headers = { Authorization: `Bearer ${db.apiKey}`, 'X-Client-Directory': db.directory };
  const knex = createKnex({ databaseUrl: null, dataDir });
  const rows: Array<{ id: number }> = await knex('invoices').where({ directory: db.directory }).orderByRaw('random()').limit(5_000).select('id');
  await knex.destroy();
  INVOICES = rows.map((r) => r.id);
} else {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-api-memory-'));
  ownDataDir = true;
  const knex = createKnex({ databaseUrl: null, dataDir });
  await migrateLatest(knex);
  await loadFixtures(knex, testFixture, { hasher: new Sha256ApiKeyHasher() });
  await knex.destroy();
}

const probeFile = path.join(OUT, 'probe.jsonl');
const probeModule = path.join(OUT, 'probe.mjs');
await writeFile(probeModule, PROBE);
const child = spawn(process.execPath, ['--heapsnapshot-signal=SIGUSR2', '--import', probeModule, ...NODE_ARGS, ...ENTRY], {
  cwd: OUT,
  env: {
    ...process.env,
    DATABASE_URL: '',
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    RATE_LIMIT_MAX: '1000000000',
    LOG_LEVEL: 'info',
    MEMORY_PROBE_FILE: probeFile,
    ...EXTRA_ENV,
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const root = await new Promise<string>((resolve, reject) => {
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === 'API listening' && entry.url) resolve(entry.url.replace(/\/$/, ''));
    } catch {
      // not a log line
    }
  });
  child.once('exit', (code) => reject(new Error(`API exited with ${code}`)));
});

const samples: Array<{ atMin: number; load1: number } & Awaited<ReturnType<typeof rollup>> & Awaited<ReturnType<typeof descendants>>> = [];
const started = Date.now();
const sample = async () =>
  samples.push({ atMin: (Date.now() - started) / 60_000, load1: os.loadavg()[0]!, ...(await rollup(child.pid!)), ...(await descendants(child.pid!)) });
const sampler = setInterval(() => void sample().catch(() => undefined), 5_000);
const byStatus: Record<string, number> = {};
let inFlight = 0;
const pending = new Set<Promise<void>>();
for (let i = 0; Date.now() < started + MINUTES * 60_000; i += 1) {
  const wait = started + (i * 1000) / RATE - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  if (inFlight >= MAX_IN_FLIGHT) continue;
  inFlight += 1;
  const done: Promise<void> = call(root, i)
    .then(async (r) => {
      await r.arrayBuffer();
      byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    })
    .catch(() => {
      byStatus.none = (byStatus.none ?? 0) + 1;
    })
    .finally(() => {
      inFlight -= 1;
      pending.delete(done);
    });
  pending.add(done);
}
await Promise.all(pending);
clearInterval(sampler);
await sample();

if (process.env.MEMORY_SNAPSHOT !== '0') {
  // Waits for the snapshot file to appear (Node writes it whole before the process handles another signal), at most
  // a minute: watched from before the signal, so its creation cannot be missed.
  const appeared = (async () => {
    try {
      for await (const change of watch(OUT, { signal: AbortSignal.timeout(60_000) })) if (change.filename?.endsWith('.heapsnapshot')) return;
    } catch {
      // No snapshot within the minute: the run reports without it.
    }
  })();
  child.kill('SIGUSR2');
  await appeared;
}
const probes = (await readFile(probeFile, 'utf8'))
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, number> & { at: number; spaces: Record<string, { size: number; used: number }> });
child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));
if (ownDataDir) await rm(dataDir, { recursive: true, force: true });

const lastThird = <T>(list: T[]) => list.slice(Math.floor((list.length * 2) / 3));
const tailProbes = lastThird(probes.filter((p) => p.at - started < MINUTES * 60_000));
const tailSamples = lastThird(samples);
const summary = {
  minutes: MINUTES,
  rate: RATE,
  nodeArgs: NODE_ARGS,
  env: EXTRA_ENV,
  byStatus,
  load1: median(tailSamples.map((s) => s.load1)),
  loadavgAtEnd: os.loadavg().map((l) => Number(l.toFixed(2))),
  rssMiB: { median: median(tailSamples.map((s) => s.rss)), min: Math.min(...samples.slice(1).map((s) => s.rss)), max: Math.max(...samples.map((s) => s.rss)) },
  anonMiB: median(tailSamples.map((s) => s.anon)),
  childrenRssMiB: median(tailSamples.map((s) => s.treeRss)),
  childrenPssMiB: median(tailSamples.map((s) => s.treePss)),
  children: median(tailSamples.map((s) => s.children)),
  fileMiB: median(tailSamples.map((s) => s.file)),
  ...Object.fromEntries(['heapTotal', 'heapUsed', 'external', 'arrayBuffers'].map((k) => [`${k}MiB`, median(tailProbes.map((p) => p[k]! / MiB))])),
  spacesMiB: Object.fromEntries(Object.keys(tailProbes.at(-1)?.spaces ?? {}).map((s) => [s, Number((tailProbes.at(-1)!.spaces[s]!.size / MiB).toFixed(1))])),
};
for (const [k, v] of Object.entries(summary)) if (typeof v === 'number') (summary as Record<string, unknown>)[k] = Number(v.toFixed(1));
await writeFile(path.join(OUT, 'samples.json'), JSON.stringify({ summary, samples }, null, 2));
console.log(JSON.stringify(summary, null, 2));
console.log(`out: ${OUT}`);
