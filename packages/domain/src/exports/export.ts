import type { DocumentLanguage } from '../invoices/invoice-document/invoice-document.js';

/** The documents an export may hold for each invoice (contract, "Exports"); the names are fixed. */
export const EXPORT_DOCUMENTS = ['pdf', 'facturx', 'ubl', 'cii'] as const;
export type ExportDocument = (typeof EXPORT_DOCUMENTS)[number];

export const EXPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/**
 * What a failed export tells the client (`error`): a fixed text per kind of failure, never an internal message; the
 * detail goes to the log with the export's id (contract, "Export storage").
 */
export const EXPORT_FAILURES = {
  /** The archive could not be written, stored, or kept within EXPORT_STORAGE_MB_PER_DIRECTORY. */
  storage: 'Storage failed.',
  /** An invoice's document could not be made. */
  rendering: 'Rendering failed.',
  /** The invoices could not be read, or the export's progress not written. */
  database: 'Database failed.',
  /** The service called it off: its runners stopped before it finished, or more invoices match now than one export may hold. */
  cancelled: 'Cancelled.',
} as const;
export type ExportFailure = keyof typeof EXPORT_FAILURES;

const FIXED_TEXTS: ReadonlySet<string> = new Set(Object.values(EXPORT_FAILURES));

/** The fixed text of a stored `error`; a row failed before the texts were fixed held a message, shown by its kind. */
function clientError(stored: string | null): string | null {
  if (stored === null || FIXED_TEXTS.has(stored)) return stored;
  if (/stored|storage/i.test(stored)) return EXPORT_FAILURES.storage;
  if (/attempts|invoices match/i.test(stored)) return EXPORT_FAILURES.cancelled;
  return EXPORT_FAILURES.rendering;
}

/** One export of a client directory: the request, its progress and, once succeeded, its archive. */
export interface Export {
  id: number;
  directory: string;
  status: ExportStatus;
  /** Unix seconds. */
  created: number;
  started: number | null;
  finished: number | null;
  /** The list filters as the client sent them (strings, as in a query). */
  filters: Record<string, string>;
  documents: ExportDocument[];
  lang: DocumentLanguage;
  duplicate: boolean;
  csv: boolean;
  total: number | null;
  done: number;
  /** The feed's end when the POST was answered: follow `GET /v1/events?after=` it after importing the archive. */
  eventsCursor: number;
  size: number | null;
  sha256: string | null;
  expires: number | null;
  error: string | null;
}

/** What a runner holds while it makes an export: the export and the attempt it claimed. */
export interface ClaimedExport {
  export: Export;
  /** Raised on every claim: a runner whose attempt is no longer the row's has lost it (cancelled or taken over). */
  attempt: number;
}

/** Where an attempt's archive is stored: a key of its own, so a dead attempt's object is never mistaken for the archive. */
export function exportArchiveKey(id: number, attempt: number): string {
  return `exports/${id}-${attempt}.zip`;
}

/** The member paths of an invoice's documents in the archive. */
export function exportMemberPath(document: ExportDocument, invoiceId: number): string {
  return document === 'pdf' || document === 'facturx' ? `${document}/${invoiceId}.pdf` : `${document}/${invoiceId}.xml`;
}

/**
 * An export exactly as the API shows it (`GET /v1/exports/{id}`); the events' `object` uses it too, so an event
 * never shows an export otherwise.
 */
export function toExportObject(item: Export) {
  return {
    id: item.id,
    status: item.status,
    created: item.created,
    started: item.started,
    finished: item.finished,
    filters: { ...item.filters },
    documents: [...item.documents],
    lang: item.lang,
    duplicate: item.duplicate,
    csv: item.csv,
    total: item.total,
    done: item.done,
    events_cursor: item.eventsCursor,
    size: item.size,
    sha256: item.sha256,
    expires: item.expires,
    error: clientError(item.error),
  };
}

export type ExportObject = ReturnType<typeof toExportObject>;
