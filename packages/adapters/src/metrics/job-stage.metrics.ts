import { Histogram, type Registry } from 'prom-client';
import type { PdfJobStage, StoreJobStage } from '@logi/domain';
import { currentRenderWork } from '../shared/bulk-work.js';

/** A stage takes milliseconds (a cache look-up, a HEAD) to seconds (a render, a wait for a page behind a backlog). */
const STAGE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * `logistics_pdf_job_stage_seconds{stage,kind}`: where a render job's time goes in this worker
 * (docs/contribute/decisions/0054-fetch-ahead-render-ranks.md): `data` (invoice read, document built), `cache_lookup`,
 * `page_wait` (waiting for a free Chromium page), `render` (on the page), `facturx`, `store` (the PDF written); `kind`
 * `interactive` or `bulk` (an export's). The renderer's call is split into the wait and the render by what the renderer
 * noted in the job's async context (RenderWork). Feed to buildJobHandlers' `onPdfStage`; call from inside the job.
 */
export function pdfJobStageMetrics(registry: Registry): (stage: PdfJobStage, ms: number) => void {
  const seconds = new Histogram({
    name: 'logistics_pdf_job_stage_seconds',
    help: 'Time a PDF render job spent in each stage (data, cache_lookup, page_wait, render, facturx, store), by kind (interactive, bulk).',
    labelNames: ['stage', 'kind'] as const,
    buckets: STAGE_BUCKETS,
    registers: [registry],
  });
  return (stage, ms) => {
    const work = currentRenderWork();
    const kind = work?.bulk ? 'bulk' : 'interactive';
    if (stage === 'render') {
      // Read once: the job's renders are done, what they waited is all in.
      const waited = Math.min(ms, work?.pageWaitMs ?? 0);
      seconds.observe({ stage: 'page_wait', kind }, waited / 1000);
      seconds.observe({ stage: 'render', kind }, (ms - waited) / 1000);
      return;
    }
    seconds.observe({ stage, kind }, ms / 1000);
  };
}

/**
 * `logistics_upload_store_stage_seconds{stage}`: where an upload's store job goes in this process (a worker, or the API
 * of the embedded profile): `lookup` (is the row there already), `check` (the object's HEAD), `commit` (the row
 * inserted and committed); a job's first run only commits. Feed to buildJobHandlers' `onStoreStage`.
 */
export function storeJobStageMetrics(registry: Registry): (stage: StoreJobStage, ms: number) => void {
  const seconds = new Histogram({
    name: 'logistics_upload_store_stage_seconds',
    help: 'Time an upload store job spent in each stage (lookup, check, commit).',
    labelNames: ['stage'] as const,
    buckets: STAGE_BUCKETS,
    registers: [registry],
  });
  return (stage, ms) => seconds.observe({ stage }, ms / 1000);
}
