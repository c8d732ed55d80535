import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobResults } from '@logi/domain';

type RenderResult = JobResults['render-invoice-pdf'];
/** What a render job's progress event tells the waiting API: its result, without the PDF. */
type HandedOverResult = Pick<RenderResult, 'pdfKey' | 'bytes' | 'invoiceNr' | 'version'>;

/**
 * A render job's PDF handed to the API that waits for it, before the job ends
 * (docs/contribute/decisions/0057-pdfs-handed-over-before-the-cache-write.md): the worker puts the bytes under a key
 * of the job's own and says so in a progress event; the API takes them (read and deleted) and answers while the
 * worker writes the PDF into the cache. An API of an older release ignores the event and waits for the job's end,
 * as before; an API that waits on an older worker never gets the event.
 */
export const PDF_HAND_OVER_MAX_BYTES = 4 * 1024 * 1024;
/** A hand-over nobody takes (its API gave up or stopped) is gone after this. */
export const PDF_HAND_OVER_TTL_MS = 30_000;

/** Where the job's PDF waits for its API; the API knows it from the job's id, never from the event. */
export function pdfHandOverKey(prefix: string, jobId: string): string {
  return `${prefix}:pdf-hand-over:${jobId}`;
}

/** Worker side: the PDF under the job's key, then the progress event. Rejects when either could not be done. */
export async function handOverPdf(commands: Redis, prefix: string, job: Job, result: RenderResult, pdf: Buffer): Promise<void> {
  if (pdf.length > PDF_HAND_OVER_MAX_BYTES) throw new Error('PDF too large to hand over through Redis');
  if (!job.id) throw new Error('A job without an id cannot hand over');
  await commands.set(pdfHandOverKey(prefix, job.id), pdf, 'PX', PDF_HAND_OVER_TTL_MS);
  const note: HandedOverResult = { pdfKey: result.pdfKey, bytes: result.bytes, invoiceNr: result.invoiceNr, version: result.version };
  await job.updateProgress({ pdfHandOver: note });
}

/** API side: the result a progress event hands over, or null for any other progress (checked: Redis is not trusted). */
export function handedOverResult(data: unknown): HandedOverResult | null {
  const note = (data as { pdfHandOver?: unknown } | null)?.pdfHandOver as Partial<Record<keyof HandedOverResult, unknown>> | undefined;
  if (!note || typeof note !== 'object') return null;
  const { pdfKey, bytes, invoiceNr, version } = note;
  if (typeof pdfKey !== 'string' || typeof invoiceNr !== 'string' || typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 1) return null;
  if (version !== undefined && typeof version !== 'string') return null;
  return { pdfKey, bytes, invoiceNr, ...(version === undefined ? {} : { version }) };
}

/** API side: the handed-over PDF, read and deleted at once; null when it is not there (expired) or not whole. */
export async function takeHandedOverPdf(client: Redis, prefix: string, jobId: string, bytes: number): Promise<Buffer | null> {
  const key = pdfHandOverKey(prefix, jobId);
  const replies = await client.multi().getBuffer(key).del(key).exec();
  const pdf = replies?.[0]?.[1];
  return Buffer.isBuffer(pdf) && pdf.length === bytes ? pdf : null;
}
