import type { Knex } from 'knex';
import type { Client } from 'minio';
import { ChromiumPdfRenderer, KnexClientRepository, KnexInvoiceRepository } from '@logi/adapters';
import { buildInvoiceDocument, type InvoiceDocument } from '@logi/domain';
import { keepAliveAgent } from './http.js';
import { stageCounters, stageMeans } from './job-stages.js';
import { BUCKET, type IoStack } from './io-stack.js';
import { log, percentile } from './progress.js';
import { cpuPer, cpuSnapshot, type CpuSnapshot } from './process-cpu.js';

export interface PdfRow {
  stack: string;
  concurrency: number;
  requests: number;
  apiPerSecond: number;
  barePerSecond: number;
  ratio: number;
  apiP50Ms: number;
  bareP50Ms: number;
  /**
   * On the highest concurrency of each stack: downloads answered from the PDF
   * cache (every invoice rendered once before), per second, and their ratio
   * to `apiPerSecond` (renders through the same API, cache cleared).
   */
  cachedPerSecond?: number;
  cachedP50Ms?: number;
  cachedRequests?: number;
  cachedRatio?: number;
  /** Where the API rounds' render jobs went, means per job (ms), from the job process's metrics. */
  stages?: PdfStages;
  /** CPU a PDF cost each part of the machine (ms, both rounds), through the API and with the bare renderer (process-cpu.ts). */
  cpu?: { api: CpuSnapshot; bare: CpuSnapshot };
}

const PDF_STAGES = ['data', 'cache_lookup', 'page_wait', 'render', 'hand_over', 'store'] as const;
/** Means per render job (ms): its wait in the queue (none inline) and its stages. */
export type PdfStages = ReturnType<typeof stageMeans<(typeof PDF_STAGES)[number]>>;
const pdfCounters = (port: number) => stageCounters(port, 'logistics_pdf_job_stage_seconds', 'pdf');

let renderRound = 0;

/**
 * Makes the next requests render: every cached PDF removed from storage (the
 * API keeps them under `pdf-cache/`), and the seller's bank name changed, so
 * that every invoice prints another version than any an API process holds in
 * memory (RecentPdfs) or remembers.
 */
async function forceRenders(s3: Client, knex: Knex, directory: string): Promise<void> {
  await clearPdfCache(s3);
  renderRound += 1;
  await knex('clients')
    .where({ directory })
    .update({ company_bank_name: `Bench Bank round ${renderRound}` });
}

async function clearPdfCache(s3: Client): Promise<void> {
  const keys: string[] = [];
  for await (const item of s3.listObjectsV2(BUCKET, 'pdf-cache/', true)) {
    const name = (item as { name?: string }).name;
    if (name) keys.push(name);
  }
  for (const key of keys) await s3.removeObject(BUCKET, key);
}

/** The mean of each field over the rounds. */
function meanOf(rounds: CpuSnapshot[]): CpuSnapshot {
  const mean = { ...rounds[0]! };
  for (const key of Object.keys(mean) as Array<keyof CpuSnapshot>) mean[key] = rounds.reduce((sum, r) => sum + r[key], 0) / rounds.length;
  return mean;
}

export interface RunResult {
  perSecond: number;
  latencies: number[];
}

/** `total` jobs at `concurrency`, each `work(i)` timed. */
export async function atConcurrency(total: number, concurrency: number, work: (i: number) => Promise<void>): Promise<RunResult> {
  let next = 0;
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const t = process.hrtime.bigint();
        await work(i);
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { perSecond: total / seconds, latencies };
}

/**
 * Invoice PDFs through the API (job, render, storage, answer) against the
 * bare warm renderer in this process printing the same invoices (same
 * template, same language, same pool size as the API's WORKER_CONCURRENCY
 * default of 2), at each concurrency. The API keeps rendered PDFs in a
 * cache, so the PDF cache is emptied before every round and each request of
 * a round prints another invoice: every API request renders. Then, at the
 * highest concurrency, the same invoices once rendered are downloaded again:
 * those come from the cache, and their rate is set against the render's.
 */
export async function benchPdf(
  knex: Knex,
  directory: string,
  stacks: IoStack[],
  options: { concurrency: number[]; chromiumPath: string; invoiceIds: number[]; s3: Client },
): Promise<PdfRow[]> {
  const invoices = new KnexInvoiceRepository(knex);
  const client = await new KnexClientRepository(knex).findByDirectory(directory);
  if (!client) throw new Error(`no client ${directory}`);
  const documents: InvoiceDocument[] = [];
  for (const id of options.invoiceIds) {
    const detail = await invoices.findDetail(directory, id);
    if (!detail) throw new Error(`invoice ${id} not found in ${directory}`);
    documents.push(buildInvoiceDocument(detail, client.company, 'pl', false, 'UTC'));
  }
  const bare = new ChromiumPdfRenderer({ chromiumPath: options.chromiumPath, rendersPerBrowser: 100_000, renderTimeoutMs: 120_000, poolSize: 2 });
  // As many connections as requests in flight, as the bare renderer has calls in flight: on one connection they would
  // queue in the agent and reach the API one at a time.
  const agent = keepAliveAgent(Math.max(...options.concurrency, 4));
  const rows: PdfRow[] = [];
  try {
    let cursor = 0;
    const nextIndex = () => cursor++ % options.invoiceIds.length;
    const viaApi = (stack: IoStack) => async () => {
      const id = options.invoiceIds[nextIndex()]!;
      const answer = await stack.api.call({ path: `/v1/invoices/${id}/pdf?lang=pl` }, agent);
      if (answer.status !== 200 || answer.body.subarray(0, 5).toString('latin1') !== '%PDF-') {
        throw new Error(`${stack.api.label}: GET /v1/invoices/${id}/pdf answered ${answer.status}: ${answer.body.subarray(0, 300).toString('utf8')}`);
      }
    };
    const direct = async () => {
      const pdf = await bare.render(documents[nextIndex()]!);
      if (pdf.subarray(0, 5).toString('latin1') !== '%PDF-') throw new Error('the bare renderer made no PDF');
    };
    // Warm both: browser launch, page pool, template.
    await atConcurrency(4, 2, direct);
    for (const stack of stacks) await atConcurrency(4, 2, viaApi(stack));

    for (const stack of stacks) {
      for (const concurrency of options.concurrency) {
        const total = Math.max(12, concurrency * 4);
        let bestApi: RunResult = { perSecond: 0, latencies: [] };
        let bestBare: RunResult = { perSecond: 0, latencies: [] };
        const counted = await pdfCounters(stack.jobMetricsPort);
        const cpu = { api: [] as CpuSnapshot[], bare: [] as CpuSnapshot[] };
        for (let round = 0; round < 2; round++) {
          await forceRenders(options.s3, knex, directory);
          cursor = 0;
          const beforeApi = cpuSnapshot();
          const a = await atConcurrency(total, concurrency, viaApi(stack));
          const beforeBare = cpuSnapshot();
          const b = await atConcurrency(total, concurrency, direct);
          cpu.api.push(cpuPer(beforeApi, beforeBare, total));
          cpu.bare.push(cpuPer(beforeBare, cpuSnapshot(), total));
          if (a.perSecond > bestApi.perSecond) bestApi = a;
          if (b.perSecond > bestBare.perSecond) bestBare = b;
        }
        const row: PdfRow = {
          stack: stack.name,
          concurrency,
          requests: total,
          apiPerSecond: bestApi.perSecond,
          barePerSecond: bestBare.perSecond,
          ratio: bestApi.perSecond / bestBare.perSecond,
          apiP50Ms: percentile(bestApi.latencies, 50),
          bareP50Ms: percentile(bestBare.latencies, 50),
          // Both rounds' jobs: the bare renderer's rounds run no job.
          stages: stageMeans(counted, await pdfCounters(stack.jobMetricsPort), PDF_STAGES),
          cpu: { api: meanOf(cpu.api), bare: meanOf(cpu.bare) },
        };
        rows.push(row);
        log(
          `PDF ${stack.name} c=${concurrency}: API ${row.apiPerSecond.toFixed(1)}/s (p50 ${row.apiP50Ms.toFixed(0)} ms), ` +
            `bare renderer ${row.barePerSecond.toFixed(1)}/s (p50 ${row.bareP50Ms.toFixed(0)} ms) -> ${row.ratio.toFixed(2)}`,
        );
      }
      // Cached downloads: every invoice rendered once (kept in the cache), then asked for again, several times over.
      const top = rows.filter((r) => r.stack === stack.name).reduce((a, b) => (b.concurrency > a.concurrency ? b : a));
      cursor = 0;
      await atConcurrency(options.invoiceIds.length, Math.min(top.concurrency, 4), viaApi(stack));
      const cachedTotal = Math.max(256, options.invoiceIds.length * 4);
      let bestCached: RunResult = { perSecond: 0, latencies: [] };
      for (let round = 0; round < 2; round++) {
        cursor = 0;
        const c = await atConcurrency(cachedTotal, top.concurrency, viaApi(stack));
        if (c.perSecond > bestCached.perSecond) bestCached = c;
      }
      top.cachedPerSecond = bestCached.perSecond;
      top.cachedP50Ms = percentile(bestCached.latencies, 50);
      top.cachedRequests = cachedTotal;
      top.cachedRatio = bestCached.perSecond / top.apiPerSecond;
      log(
        `PDF ${stack.name} c=${top.concurrency}: cached download ${bestCached.perSecond.toFixed(1)}/s (p50 ${top.cachedP50Ms.toFixed(0)} ms) ` +
          `vs render ${top.apiPerSecond.toFixed(1)}/s -> ${top.cachedRatio.toFixed(1)}x`,
      );
    }
  } finally {
    agent.destroy();
    await bare.close();
  }
  return rows;
}
