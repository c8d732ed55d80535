import type { PdfRow } from './pdf.js';
import { CPU_PARTS } from './process-cpu.js';
import { ms, queueWait, table, TARGETS, verdict, when } from './report-format.js';

/** The PDF part's results as benchmarks.md and bench-results.json keep them. */
export interface PdfResults {
  at: string;
  rows: PdfRow[];
  invoices: number;
}

/** Invoice PDFs through the API against the bare renderer: rates, the jobs' stages, CPU by part, cached downloads. */
export function pdfSection(p: PdfResults): string[] {
  const rows = p.rows.map((r) => [
    r.stack,
    String(r.concurrency),
    String(r.requests),
    `${r.apiPerSecond.toFixed(1)}/s (p50 ${ms(r.apiP50Ms)})`,
    `${r.barePerSecond.toFixed(1)}/s (p50 ${ms(r.bareP50Ms)})`,
    r.ratio.toFixed(2),
    verdict(r.ratio >= TARGETS.pdf),
  ]);
  return [
    '## Invoice PDFs against the bare renderer',
    '',
    `Run of ${when(p.at)}. \`GET /v1/invoices/{id}/pdf?lang=pl\` (before each round the PDF cache emptied and the seller's bank name changed, so that no API process holds a PDF or a printed version of it in memory either; each request another of ${p.invoices} invoices, so every answer is rendered) ` +
      'against `ChromiumPdfRenderer` in the benchmark process printing the same invoices (same template and language, warm browser, ' +
      'a pool of 2 pages like the API’s default WORKER_CONCURRENCY), alternated twice, the better round of each counted. ' +
      'The API’s requests in flight each have a keep-alive connection of their own (runs before 2026-11-28 21:00 UTC sent them on one, so the API saw one at a time). ' +
      '`inline`: MariaDB + S3 (s3rver), jobs in the API process; `queue`: the same plus Redis/BullMQ and one `pnpm worker` process.',
    '',
    table(['Stack', 'Concurrency', 'Requests', 'API', 'Bare renderer', 'API/bare', `target ≥ ${TARGETS.pdf}`], rows, ['l', 'r', 'r', 'r', 'r', 'r', 'l']),
    '',
    ...pdfStagesTable(p.rows),
    ...pdfCpuTable(p.rows),
    ...pdfCacheSection(p),
  ];
}

/**
 * Where the API rounds' render jobs went (both rounds of each row), from the job process's histograms; the stages of
 * the bare renderer are its render alone. Runs of the code before them have no stages.
 */
function pdfStagesTable(pdfRows: PdfRow[]): string[] {
  const timed = pdfRows.filter((r) => r.stages?.jobs);
  if (timed.length === 0) return [];
  const rows = timed.map((r) => {
    const s = r.stages!;
    return [
      r.stack,
      String(r.concurrency),
      String(s.jobs),
      queueWait(s.waitMs),
      ms(s.data),
      ms(s.cache_lookup),
      ms(s.page_wait),
      ms(s.render),
      s.hand_over === undefined ? '' : ms(s.hand_over),
      ms(s.store),
    ];
  });
  return [
    "Where the render jobs of those rounds went, means per job from the histograms of the process that ran them (`logistics_fair_share_wait_seconds` of the `pdf` queue, `logistics_pdf_job_stage_seconds`): the wait from the job's add to its start in the worker, the invoice read and its document built, the cache's HEAD (beside the page wait and the render since 2026-11-29), the wait for a free Chromium page, the render on it, the PDF handed to the waiting API before the job ends (a Redis key the API takes, or the in-process queue's answer; since 2026-11-29), the PDF's PUT. Around the job the API reads the invoice and the cache itself first; the PDF from storage after only where nothing was handed over (docs/operate/observability.md).",
    '',
    // The stack's name on the left, the figures on the right.
    table(['Stack', 'Concurrency', 'Jobs', 'Queue wait', 'Data', 'Cache look-up', 'Page wait', 'Render', 'Hand-over', 'Store'], rows, [
      'l',
      ...Array<'r'>(9).fill('r'),
    ]),
    '',
  ];
}

/** What a PDF cost each part of the machine in CPU, through the API and with the bare renderer. Runs before 2026-11-29 18:00 UTC have none. */
function pdfCpuTable(pdfRows: PdfRow[]): string[] {
  const measured = pdfRows.filter((r) => r.cpu);
  if (measured.length === 0) return [];
  const rows = measured.flatMap((r) =>
    (['api', 'bare'] as const).map((kind) => {
      const c = r.cpu![kind];
      const busy = CPU_PARTS.reduce((sum, part) => sum + c[part], 0);
      return [r.stack, String(r.concurrency), kind === 'api' ? 'API' : 'bare renderer', ...CPU_PARTS.map((part) => ms(c[part])), ms(busy), ms(c.idle)];
    }),
  );
  return [
    "What one PDF cost in CPU, by part of the machine, means of both rounds of each row: every process's user and system time from `/proc` before and after each round, divided by the round's PDFs (test/bench/process-cpu.ts; Chromium's processes count as Chromium whoever started them; `bench` is the benchmark process, the HTTP client of the API rounds and the bare renderer's caller; `other` the rest of the machine's busy time, from `/proc/stat`, so that the parts add up to it: on these virtual machines about a quarter of the busy time under load is in the per-core count and in no process's, as a bare render loop alone showed, 39.1 s busy against 28.0 s in its processes with none started or ended, so `other` is mostly that and moves with the load). Busy and idle are the machine's, over both cores: a round whose idle time is near zero was bound by the cores, not by a wait.",
    '',
    table(['Stack', 'Concurrency', 'Round', 'Chromium', 'API', 'Worker', 'S3 server', 'Redis', 'MariaDB', 'Bench', 'Other', 'Busy', 'Idle'], rows, [
      'l',
      'r',
      'l',
      ...Array<'r'>(10).fill('r'),
    ]),
    '',
  ];
}

/** Cached downloads against renders through the same API, same run (rows that carry the cached measurement). */
function pdfCacheSection(p: PdfResults): string[] {
  const cached = p.rows.filter((r) => r.cachedPerSecond !== undefined);
  if (!cached.length) return [];
  const rows = cached.map((r) => [
    r.stack,
    String(r.concurrency),
    String(r.cachedRequests ?? 0),
    `${r.cachedPerSecond!.toFixed(1)}/s (p50 ${ms(r.cachedP50Ms)})`,
    `${r.apiPerSecond.toFixed(1)}/s (p50 ${ms(r.apiP50Ms)})`,
    `${r.cachedRatio!.toFixed(1)}×`,
    verdict(r.cachedRatio! >= TARGETS.pdfCached),
  ]);
  return [
    '### Cached PDF downloads against renders',
    '',
    'The render rounds above make every API request render (see there). Here the ' +
      `same ${p.invoices} invoices, each rendered once, are downloaded again through the same API (same query, same concurrency), ` +
      'answered without the queue or Chromium: from the API process’s memory (the version it printed at this data version, and the PDF’s bytes, `PDF_MEMORY_CACHE_MB`), ' +
      'else from the cache in storage; the better of two rounds.',
    '',
    table(['Stack', 'Concurrency', 'Requests', 'Cached download', 'Render (API)', 'Cached/render', `target ≥ ${TARGETS.pdfCached}×`], rows, [
      'l',
      ...Array<'r'>(5).fill('r'),
      'l',
    ]),
    '',
  ];
}
