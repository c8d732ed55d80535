/**
 * Where the time of one PDF goes (issue 26): `pnpm exec tsx test/bench/pdf-stages.ts`.
 *
 * 1. Each stage of one PDF timed on its own, with the project's adapters against the production stack
 *    (MariaDB, s3rver in its own process, Redis/BullMQ): request parsing, the data version and the data
 *    read, building the document, its hash, the template, the job hand-off through BullMQ (a job that
 *    does nothing, answered by a worker in this process), Chromium's `setContent` and `page.pdf`, and the
 *    storage round trips of the render path (HEAD, PUT, GET, DELETE of the PDF's bytes). Medians.
 * 2. The whole PDF through the API (queue profile: one API process, one `pnpm worker` process) against
 *    the bare renderer (a pool of 2 pages, as the worker), at concurrency 1 and 4, every request rendered.
 *
 * `STAGES_CPU_PROF=1` starts the API and the worker with `--cpu-prof` (BENCH_CHILD_NODE_ARGS) and prints their top self-time
 * functions. Prints a Markdown summary on stdout; progress on stderr.
 */
import { randomUUID } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { chromium } from 'playwright-core';
import {
  BullmqJobQueue,
  BullmqJobWorker,
  createKnex,
  HandlebarsInvoiceTemplate,
  invoiceTemplateVersion,
  KnexClientRepository,
  KnexInvoiceRepository,
  MinioFileStorage,
  Sha256ContentHasher,
  ChromiumPdfRenderer,
} from '@logi/adapters';
import { buildInvoiceDocument, loadInvoiceDocument, parseInvoicePdfQuery, pdfVersionOf, type JobHandlers } from '@logi/domain';
import { pino } from 'pino';
import { ApiProcess } from './api-process.js';
import { keepAliveAgent } from './http.js';
import { loadBenchConfig, parseSize, ROOT, WORK_DIR } from './config.js';
import { BUCKET, deleteRedisKeys, startS3, startWorker } from './io-stack.js';
import { atConcurrency } from './pdf.js';
import { log, percentile } from './progress.js';
import { cleanupAll, stopChild } from './processes.js';
import { prepareMariadb } from './seed.js';

const SAMPLES = Number(process.env.STAGES_SAMPLES ?? 20);
const E2E_REQUESTS = Number(process.env.STAGES_REQUESTS ?? 16);
const CPU_PROF = process.env.STAGES_CPU_PROF === '1';

async function timed(samples: number, work: (i: number) => unknown): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = process.hrtime.bigint();
    await work(i);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return percentile(ms, 50);
}

/** `total` calls at `concurrency` (the PDF part's loop); rate and p50. */
async function rateAndP50(total: number, concurrency: number, work: (i: number) => Promise<void>): Promise<{ perSecond: number; p50: number }> {
  const { perSecond, latencies } = await atConcurrency(total, concurrency, work);
  return { perSecond, p50: percentile(latencies, 50) };
}

/**
 * Top self-time functions of one .cpuprofile, counting only the samples within `window` (µs of the monotonic
 * clock, which V8's profile timestamps and `process.hrtime` share on Linux), so start-up and shutdown stay out.
 */
function topSelf(
  file: string,
  window: [number, number],
  n = 12,
): { totalMs: number; idleMs: number; rows: Array<{ name: string; ms: number; share: number }> } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  let at = profile.startTime;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (at < window[0] || at > window[1]) return;
    const frame = byId.get(id)!.callFrame;
    const where = frame.url
      .replace(/^file:\/\//, '')
      .replace(`${ROOT}/`, '')
      .replace(/^.*node_modules\/\.pnpm\/([^/]+)\/node_modules\//, '$1: ');
    const name = `${frame.functionName || '(anonymous)'} ${where ? `${where}:${frame.lineNumber + 1}` : ''}`.trim();
    total += us;
    if (name === '(idle)') idle += us;
    self.set(name, (self.get(name) ?? 0) + us);
  });
  const busy = total - idle;
  const rows = [...self.entries()]
    .filter(([name]) => name !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us]) => ({ name, ms: us / 1000, share: us / busy }));
  return { totalMs: total / 1000, idleMs: idle / 1000, rows };
}

async function main(): Promise<void> {
  const config = loadBenchConfig();
  const db = await prepareMariadb(config, parseSize('2k'), 'logi_bench_stages');
  const knex: Knex = createKnex({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
  const s3 = await startS3();
  const prefix = `stages-${randomBytes(4).toString('hex')}`;
  const lines: string[] = [];
  const out = (line = '') => {
    lines.push(line);
    log(line);
  };
  const profDir = path.join(WORK_DIR, `cpu-prof-${Date.now()}`);
  try {
    const ids = ((await knex('invoices').select('id').where({ directory: db.directory, type: 's' }).orderBy('id').limit(64)) as Array<{ id: number }>).map(
      (r) => Number(r.id),
    );
    const invoices = new KnexInvoiceRepository(knex);
    const clients = new KnexClientRepository(knex);
    const hasher = new Sha256ContentHasher();
    const template = new HandlebarsInvoiceTemplate();
    const templateVersion = invoiceTemplateVersion();
    const storage = new MinioFileStorage({
      endPoint: s3.env.S3_ENDPOINT!,
      accessKey: s3.env.S3_ACCESS_KEY!,
      secretKey: s3.env.S3_SECRET_KEY!,
      bucket: BUCKET,
    });
    const deps = { invoices, clients, hasher, timeZone: 'UTC' };
    const at = (i: number) => ({ directory: db.directory, invoiceId: ids[i % ids.length]! });
    const options = () => ({ lang: 'pl' as const, duplicate: false });

    // 1. Stages, each on its own.
    const stages: Array<[string, string, number]> = [];
    const query: Array<[string, string]> = [['lang', 'pl']];
    stages.push(['request parsing (query)', 'API', await timed(SAMPLES * 50, () => parseInvoicePdfQuery(query))]);
    stages.push(['data version', 'database', await timed(SAMPLES, () => invoices.dataVersion(db.directory))]);
    stages.push(['data read (invoice, rows, seller) + document', 'database + CPU', await timed(SAMPLES, (i) => loadInvoiceDocument(deps, at(i), options))]);
    const loaded = await loadInvoiceDocument(deps, at(0), options);
    stages.push([
      'document build alone (formats, translations)',
      'CPU',
      await timed(SAMPLES * 5, () => buildInvoiceDocument(loaded.invoice, loaded.seller, 'pl', false, 'UTC')),
    ]);
    stages.push(['document hash (canonical JSON + SHA-256)', 'CPU', await timed(SAMPLES * 5, () => pdfVersionOf(loaded.document, templateVersion, hasher))]);
    stages.push(['template (HTML + footer)', 'CPU', await timed(SAMPLES * 5, () => [template.html(loaded.document), template.footer(loaded.document)])]);

    // The hand-off alone: a job that does nothing, through Redis both ways, fair priority included.
    const queue = new BullmqJobQueue({ redis: config.redisUrl, prefix });
    const noop = async () => ({ pdfKey: 'pdf/x.pdf', bytes: 0, invoiceNr: 'x', version: 'v' });
    const worker = new BullmqJobWorker({
      redis: config.redisUrl,
      prefix,
      concurrency: 2,
      logger: pino({ level: 'silent' }),
      handlers: { 'render-invoice-pdf': noop, 'store-order-file': noop } as unknown as JobHandlers,
    });
    const payload = (n: number) => ({
      directory: db.directory,
      invoiceId: ids[0]!,
      lang: 'pl' as const,
      duplicate: false,
      pdfKey: `pdf/${randomUUID()}.pdf`,
      cache: true,
      requestId: `r${n}`,
      deadline: Date.now() + 30_000,
    });
    let jobs = 0;
    const handOff = () => queue.runAndWait('render-invoice-pdf', payload(++jobs), { timeoutMs: 30_000, jobId: `stage-${prefix}-${jobs}` });
    await timed(5, handOff);
    stages.push(['job hand-off (BullMQ add, fair priority, worker pick-up, completed event), no-op job', 'Redis', await timed(SAMPLES, handOff)]);
    await worker.close();
    await queue.close();

    const browser = await chromium.launch({ executablePath: config.chromiumPath, args: ['--no-sandbox'] });
    const page = await browser.newPage();
    const html = template.html(loaded.document);
    const footer = template.footer(loaded.document);
    const pdfOptions = {
      format: 'A4',
      printBackground: true,
      displayHeaderFooter: true,
      headerTemplate: '<span></span>',
      footerTemplate: footer,
      margin: { top: '14mm', right: '12mm', bottom: '16mm', left: '12mm' },
    };
    for (let i = 0; i < 3; i++) {
      await page.setContent(html, { waitUntil: 'load' });
      await page.pdf(pdfOptions);
    }
    stages.push(['Chromium setContent', 'Chromium', await timed(SAMPLES, () => page.setContent(html, { waitUntil: 'load' }))]);
    const pdf = await page.pdf(pdfOptions);
    stages.push(['Chromium page.pdf', 'Chromium', await timed(SAMPLES, () => page.pdf(pdfOptions))]);
    await browser.close();

    const key = (i: number) => `stages/${prefix}/${i}.pdf`;
    await storage.putBuffer(key(-1), pdf, 'application/pdf');
    stages.push(['storage HEAD (cache look before the render, a miss)', 'storage', await timed(SAMPLES, (i) => storage.exists(`stages/none-${i}.pdf`))]);
    stages.push([
      `storage PUT (${(pdf.length / 1024).toFixed(0)} KiB)`,
      'storage',
      await timed(SAMPLES, (i) => storage.putBuffer(key(i), pdf, 'application/pdf')),
    ]);
    stages.push(['storage GET', 'storage', await timed(SAMPLES, (i) => storage.getBuffer(key(i)))]);
    stages.push(['storage DELETE (hand-over key)', 'storage', await timed(SAMPLES, (i) => storage.delete(key(i)))]);

    out(`### Stages of one PDF, each alone (medians of ${SAMPLES}; ${new Date().toISOString()})`);
    out();
    out('| Stage | Where | ms |');
    out('| --- | --- | ---: |');
    for (const [name, where, ms] of stages) out(`| ${name} | ${where} | ${ms < 0.1 ? ms.toFixed(3) : ms.toFixed(1)} |`);
    out();

    // 2. The whole PDF through the API (queue profile) against the bare renderer.
    if (CPU_PROF) {
      mkdirSync(profDir, { recursive: true });
      process.env.BENCH_CHILD_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${profDir}`;
    }
    const queueEnv = { ...db.env, ...s3.env, REDIS_URL: config.redisUrl, REDIS_PREFIX: prefix };
    const workerProcess = await startWorker({ ...queueEnv, DATA_DIR: path.join(WORK_DIR, 'worker-stages') });
    const workerPid = workerProcess.pid;
    const api = await ApiProcess.start(
      'API (queue, stages)',
      { ...queueEnv, DATA_DIR: path.join(WORK_DIR, 'api-stages') },
      { key: db.apiKey, directory: db.directory },
    );
    delete process.env.BENCH_CHILD_NODE_ARGS;
    const bare = new ChromiumPdfRenderer({ chromiumPath: config.chromiumPath, rendersPerBrowser: 100_000, renderTimeoutMs: 120_000, poolSize: 2 });
    const documents = await Promise.all(ids.map(async (id) => (await loadInvoiceDocument(deps, { directory: db.directory, invoiceId: id }, options)).document));
    let round = 0;
    const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
    const measured: [number, number] = [0, 0];
    // A connection per request in flight (4 at most here): on one they would reach the API one at a time.
    const agent = keepAliveAgent(4);
    const viaApi = async (i: number) => {
      const answer = await api.call({ path: `/v1/invoices/${ids[i % ids.length]}/pdf?lang=pl` }, agent);
      if (answer.status !== 200) throw new Error(`API answered ${answer.status}: ${answer.body.subarray(0, 300).toString('utf8')}`);
    };
    const forceRenders = () =>
      knex('clients')
        .where({ directory: db.directory })
        .update({ company_bank_name: `Stages Bank ${prefix} ${++round}` });
    try {
      await rateAndP50(4, 2, viaApi);
      await rateAndP50(4, 2, (i) => bare.render(documents[i % documents.length]!).then(() => undefined));
      measured[0] = monotonicUs();
      out('### One PDF end to end (queue profile) against the bare renderer (2 pages each)');
      out();
      out('| Concurrency | API p50 | API rate | bare p50 | bare rate | API/bare |');
      out('| ---: | ---: | ---: | ---: | ---: | ---: |');
      for (const concurrency of [1, 4]) {
        const total = Math.max(E2E_REQUESTS, concurrency * 4);
        await forceRenders();
        const a = await rateAndP50(total, concurrency, viaApi);
        const b = await rateAndP50(total, concurrency, (i) => bare.render(documents[i % documents.length]!).then(() => undefined));
        out(
          `| ${concurrency} | ${a.p50.toFixed(0)} ms | ${a.perSecond.toFixed(2)}/s | ${b.p50.toFixed(0)} ms | ${b.perSecond.toFixed(2)}/s | ${(a.perSecond / b.perSecond).toFixed(2)} |`,
        );
      }
      measured[1] = monotonicUs();
      out();
    } finally {
      agent.destroy();
      await bare.close();
      await api.stop();
      await stopChild(workerProcess, 25_000);
    }

    if (CPU_PROF) {
      for (const file of readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'))) {
        const { totalMs, idleMs, rows } = topSelf(path.join(profDir, file), measured);
        const role = file.includes(`.${workerPid}.`) ? 'worker' : 'API';
        out(
          `### CPU profile of the ${role} (${file}; the timed requests only): ${(totalMs / 1000).toFixed(1)} s sampled, ${((totalMs - idleMs) / 1000).toFixed(1)} s busy`,
        );
        out();
        out('| Function (self time) | ms | share of busy |');
        out('| --- | ---: | ---: |');
        for (const row of rows) out(`| \`${row.name}\` | ${row.ms.toFixed(0)} | ${(row.share * 100).toFixed(1)} % |`);
        out();
      }
    }
  } finally {
    await deleteRedisKeys(config.redisUrl, prefix).catch(() => undefined);
    await knex.destroy();
    await s3.stop();
    await cleanupAll();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    void cleanupAll().finally(() => process.exit(1));
  },
);
