import { z } from 'zod';
import { DOCUMENT_LANGUAGES, EXPORT_DOCUMENTS, EXPORT_FAILURES, EXPORT_STATUSES } from '@logi/domain';

const seconds = (description: string) => z.int().nonnegative().nullable().describe(description);

/** An export as the API shows it (mappers/export.mapper.ts), and as `export.*` events carry it. */
export const exportSchema = z
  .strictObject({
    id: z.int().describe('Export ID.'),
    status: z.enum(EXPORT_STATUSES).describe('`queued` -> `running` -> `succeeded` | `failed`.'),
    created: z.int().nonnegative().describe('When it was asked for, Unix seconds, UTC.'),
    started: seconds('When a worker started it (the first attempt), or null.'),
    finished: seconds('When it succeeded or failed, or null.'),
    filters: z.record(z.string(), z.string()).describe('The list filters as sent (empty values left out).'),
    documents: z.array(z.enum(EXPORT_DOCUMENTS)).describe('The documents of each invoice.'),
    lang: z.enum(DOCUMENT_LANGUAGES),
    duplicate: z.boolean(),
    csv: z.boolean(),
    total: z.int().nonnegative().nullable().describe('How many invoices it holds; known once running.'),
    done: z.int().nonnegative().describe('How many invoices are written so far.'),
    events_cursor: z
      .int()
      .nonnegative()
      .describe('The feed position when it was asked for: after importing the archive, follow `GET /events?after=<events_cursor>` and miss nothing.'),
    size: z.int().nonnegative().nullable().describe('The archive size in bytes once succeeded, else null.'),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .describe('The archive SHA-256 (lower-case hex) once succeeded, else null; also its download `ETag`.'),
    expires: seconds('When the archive and the export are removed (EXPORT_RETENTION_HOURS after it finished), or null.'),
    error: z
      .enum(Object.values(EXPORT_FAILURES) as [string, ...string[]])
      .nullable()
      .describe(
        'Why it failed, a fixed text; null unless failed. `Storage failed.`: the archive could not be written or stored, or it would take this client past EXPORT_STORAGE_MB_PER_DIRECTORY. `Rendering failed.`: a document could not be made. `Database failed.`: the invoices could not be read. `Cancelled.`: the service called it off (its workers stopped three times before it finished, or more invoices match now than EXPORT_MAX_INVOICES). The detail is in the service’s log, under the export’s id.',
      ),
  })
  .describe('An export: many invoices’ documents in one ZIP archive, made by a worker.');
