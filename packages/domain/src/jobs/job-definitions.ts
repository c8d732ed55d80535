import type { PdfFormat } from '../invoices/download-invoice-pdf/invoice-pdf.query.js';
import type { DocumentLanguage } from '../invoices/invoice-document/invoice-document.js';

export const JOB_NAMES = ['render-invoice-pdf', 'store-order-file'] as const;
export type JobName = (typeof JOB_NAMES)[number];

/**
 * When the caller stops waiting (Unix ms). A job that would finish later
 * writes nothing: the client was told 503 and may retry, so a late result
 * must leave neither a stray PDF nor a file the client does not know of.
 */
interface Deadline {
  deadline: number;
}

/**
 * The deadline a caller that waits `waitMs` gives its job: a little before it
 * stops waiting (a tenth of the wait, a second at most), so that a result
 * written just in time still has time to travel back to the caller.
 */
export function jobDeadline(nowMs: number, waitMs: number): number {
  return nowMs + waitMs - Math.min(1_000, Math.floor(waitMs / 10));
}

/**
 * Jobs of one kind that a worker (or the API process, in-process) runs at once, each kind in slots of its own so
 * that renders never hold up file stores: WORKER_CONCURRENCY renders (one warm Chromium page each), and four times
 * as many file stores, which only check an object and commit a row (issue 26).
 */
export function jobConcurrency(name: JobName, workerConcurrency: number): number {
  return name === 'store-order-file' ? workerConcurrency * STORE_JOBS_PER_RENDER_SLOT : workerConcurrency;
}

const STORE_JOBS_PER_RENDER_SLOT = 4;

/** Longer than a row insert takes to commit once its deadline check has passed. */
const COMMIT_WINDOW_MS = 1_000;

/**
 * Resolves once a job with this deadline can write nothing more: its
 * deadline plus a commit's time, read on `now`. What is stored then is final.
 */
export async function whenJobSettled(deadline: number, now: () => number): Promise<void> {
  const wait = deadline + COMMIT_WINDOW_MS - now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/**
 * Job payloads carry references, never file or PDF bytes: uploads and
 * rendered PDFs live in file storage, the job carries their keys.
 */
export interface JobPayloads {
  'render-invoice-pdf': {
    directory: string;
    invoiceId: number;
    lang: DocumentLanguage;
    duplicate: boolean;
    /** `facturx`: the PDF made Factur-X (PDF/A-3 with the CII XML inside). Absent: `pdf`. */
    format?: PdfFormat;
    /** Where the rendered PDF is handed over when it is not kept in the PDF cache. */
    pdfKey: string;
    /**
     * Keep the PDF in the cache (`pdf-cache/<version>.pdf`, the version of
     * what this job printed) and hand it over from there. Absent: false.
     */
    cache?: boolean;
    requestId: string;
  } & Deadline;
  'store-order-file': {
    directory: string;
    orderId: number;
    categoryId: number | null;
    name: string;
    size: number;
    contentType: string;
    sha256: string;
    /** Sent only by an API before ADR 0046, which staged the bytes here; the job copies them to `storageKey`. */
    stagingKey?: string;
    /** Where the file is kept for good, written by the API before the job; the row points here. */
    storageKey: string;
    requestId: string;
  } & Deadline;
}

export interface JobResults {
  /**
   * Where the PDF is (the cache key, or the job's `pdfKey`); the invoice
   * number comes back for the download's file name, the version of what was
   * printed for its ETag (absent from a worker of an older release), and why
   * the cache could not keep it, if it could not.
   */
  'render-invoice-pdf': {
    pdfKey: string;
    bytes: number;
    invoiceNr: string;
    version?: string;
    cacheError?: string;
    /**
     * The PDF itself, when the queue handed it to the caller before the job ended (JobRun `handOverPdf`): never
     * part of a job's stored result, which carries keys only.
     */
    pdf?: Buffer;
  };
  /** A storage failure is a result, not an error: it ends up in the upload's `failed[]`. */
  'store-order-file': { fileId: number } | { error: string };
}

/** The error text of a store job that ran past its caller's deadline. */
export const LATE_JOB_ERROR = 'The caller stopped waiting; nothing was stored.';

/** What the queue knows of one run of a job. */
export interface JobRun {
  /**
   * True only when no other run of this job can have started before this one: not a retry, and not a job taken
   * over from a worker that stalled or died (BullMQ counts both as started). Absent: taken as false.
   */
  firstRun: boolean;
  /**
   * Hands a render's result and its PDF to the caller waiting for the job, before the job ends: the caller answers
   * while the job still keeps the PDF in the cache. Absent where the queue cannot (a worker then stores, and the
   * caller reads the PDF back). Rejects when it could not hand over; the job's end answers then.
   */
  handOverPdf?: (result: JobResults['render-invoice-pdf'], pdf: Buffer) => Promise<void>;
}

export type JobHandler<N extends JobName> = (payload: JobPayloads[N], run?: JobRun) => Promise<JobResults[N]>;

/** The one set of handlers that both the in-process queue and the worker run. */
export type JobHandlers = { [N in JobName]: JobHandler<N> };
