import { z } from 'zod';
import { DOCUMENT_LANGUAGES } from '../invoices/invoice-document/invoice-document.js';
import { PDF_FORMATS } from '../invoices/download-invoice-pdf/invoice-pdf.query.js';
import { MAX_FILE_BYTES } from '../orders/attach-files/upload-rules.js';
import type { JobName, JobPayloads } from './job-definitions.js';
import { InvalidJobPayloadError } from './jobs.errors.js';

/**
 * What a job may carry, checked where a job is taken (the handlers' registration, `buildJobHandlers`): a job comes
 * through Redis, and whoever can write there must not reach another directory's objects or rows through it
 * (docs/contribute/decisions/0050-job-payloads-validated.md). Keys are not free text: each is the exact key the API
 * makes, rebuilt here from the job's own directory and ids.
 */

/** A client directory as the CLI and the fixtures accept it: no `/`, no `%`, never `.` or `..`. */
const DIRECTORY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** The ids the API mints for keys (`randomUUID`). */
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const PDF_HAND_OVER_KEY = new RegExp(`^pdf/${UUID}\\.pdf$`);
const STAGING_KEY = new RegExp(`^staging/${UUID}$`);
const ORDER_FILE_ID = new RegExp(`^${UUID}$`);

const directory = z.string().regex(DIRECTORY);
const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const requestId = z.string().min(1).max(128);
const deadline = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** `orders/<directory>/<order id>/`: the folder of one order's files, as the upload writes them. */
export function orderFileKeyPrefix(directory: string, orderId: number): string {
  return `orders/${directory}/${orderId}/`;
}

/**
 * Whether `key` is a file key of this directory's order, `orders/<directory>/<order id>/<uuid>`, and nothing else:
 * the key is compared with the one rebuilt from the directory and the order id, and its last part must be a uuid,
 * so `..`, `%2F`, `\`, a leading `/` or a key of another directory or order never pass. A directory of another
 * shape (a `/` or `..` of its own) is refused as well.
 */
export function isOrderFileKey(key: string, directory: string, orderId: number): boolean {
  if (!DIRECTORY.test(directory) || !Number.isSafeInteger(orderId) || orderId < 1) return false;
  const prefix = orderFileKeyPrefix(directory, orderId);
  return key.startsWith(prefix) && ORDER_FILE_ID.test(key.slice(prefix.length));
}

const renderInvoicePdf = z.strictObject({
  directory,
  invoiceId: id,
  lang: z.enum(DOCUMENT_LANGUAGES),
  duplicate: z.boolean(),
  format: z.enum(PDF_FORMATS).optional(),
  pdfKey: z.string().regex(PDF_HAND_OVER_KEY, { message: 'must be pdf/<uuid>.pdf' }),
  cache: z.boolean().optional(),
  requestId,
  deadline,
});

const storeOrderFile = z
  .strictObject({
    directory,
    orderId: id,
    categoryId: id.nullable(),
    name: z.string().min(1).max(1024),
    size: z.number().int().nonnegative().max(MAX_FILE_BYTES),
    contentType: z.string().min(1).max(255),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    stagingKey: z.string().regex(STAGING_KEY, { message: 'must be staging/<uuid>' }).optional(),
    storageKey: z.string().max(512),
    requestId,
    deadline,
  })
  .refine((job) => isOrderFileKey(job.storageKey, job.directory, job.orderId), {
    path: ['storageKey'],
    message: 'must be orders/<directory>/<orderId>/<uuid> of the job’s own directory and order',
  });

/**
 * One schema per job, strict: a field the API does not send is refused, not dropped, so a payload is either what this
 * release's API (or the one before ADR 0046, with its `stagingKey`) sends, or no job at all. A field added to a job
 * is added to its schema in the same change.
 */
const SCHEMAS: { [N in JobName]: z.ZodType<JobPayloads[N]> } = {
  'render-invoice-pdf': renderInvoicePdf,
  'store-order-file': storeOrderFile,
};

/** The payload as its handler may use it, or InvalidJobPayloadError (a job that no retry can mend). */
export function parseJobPayload<N extends JobName>(name: N, data: unknown): JobPayloads[N] {
  const schema = SCHEMAS[name] as z.ZodType<JobPayloads[N]> | undefined;
  if (!schema) throw new InvalidJobPayloadError(name, ['(job): unknown job name']);
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  throw new InvalidJobPayloadError(
    name,
    parsed.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(payload)'}: ${issue.message}`),
  );
}
