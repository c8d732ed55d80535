import type { ContentHasherPort } from '../../ports/content-hasher.port.js';
import type { EInvoice } from '../e-invoice/e-invoice.js';
import type { InvoiceDocument } from '../invoice-document/invoice-document.js';

/** Where rendered PDFs are kept for reuse, one object per version: `pdf-cache/<version>.pdf`. */
export const PDF_CACHE_PREFIX = 'pdf-cache/';

/** A version is 64 lower-case hex digits (SHA-256). */
const VERSION = /^[0-9a-f]{64}$/;

/**
 * The version of a printed invoice: SHA-256 over a canonical serialisation of
 * the document (every text and value printed, already translated and
 * formatted: the invoice, its orders and items, the seller's company data,
 * `lang`, the duplicate mark) and the template's version. Anything that
 * changes the page changes the version, so a PDF kept under it is never
 * served for other data; the same data and template give the same version
 * in every process. It is the PDF's strong ETag and its cache key.
 */
export function pdfVersionOf(document: InvoiceDocument, templateVersion: string, hasher: ContentHasherPort, facturX?: FacturXPart): string {
  // A plain PDF hashes as it always did (`facturX` absent), so its cached copies and ETags stay valid.
  return hasher.sha256Hex(canonicalJson({ format: 'invoice-pdf/1', template: templateVersion, document, facturX }));
}

/**
 * What a Factur-X PDF adds to the printed page: the e-invoice embedded in it
 * and the writer's version. Part of its version, so a Factur-X PDF and the
 * plain PDF of the same invoice are two versions and two cache objects.
 */
export interface FacturXPart {
  writer: string;
  invoice: EInvoice;
}

/**
 * Where a PDF of `directory` is cached: `pdf-cache/<version>.<owner>.pdf`, the owner the directory's UTF-8 bytes in hex,
 * so that the sweep can keep each directory's fair share (docs/contribute/decisions/0036-fair-render-scheduling.md).
 */
export function pdfCacheKey(version: string, directory: string): string {
  if (!VERSION.test(version)) throw new Error(`Not a PDF version: ${JSON.stringify(version.slice(0, 80))}`);
  return `${PDF_CACHE_PREFIX}${version}.${ownerOf(directory)}.pdf`;
}

function ownerOf(directory: string): string {
  let hex = '';
  for (const byte of new TextEncoder().encode(directory)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** The owner part of a cache key (`''` for a key of a release before fair shares, which named no owner). */
export function pdfCacheOwner(key: string): string {
  const match = /^pdf-cache\/[0-9a-f]{64}\.([0-9a-f]+)\.pdf$/.exec(key);
  return match ? match[1]! : '';
}

/**
 * JSON with object keys sorted at every level, so that the same data always
 * gives the same text whatever order its fields were built in. `undefined`
 * fields are left out, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    return Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}
