import type { ContentHasherPort } from '../../ports/content-hasher.port.js';
import { canonicalJson } from '../invoice-pdf-cache/pdf-version.js';
import type { EInvoice, EInvoiceFormat } from './e-invoice.js';
import { FA3_REVISION } from '../ksef/fa3-document.js';

/**
 * The version of one e-invoice: SHA-256 over the document's data, the syntax
 * and the writer's version. The same data gives the same XML, so it is the
 * XML's strong ETag.
 */
export function eInvoiceVersionOf(invoice: EInvoice, format: EInvoiceFormat, writerVersion: string, hasher: ContentHasherPort): string {
  // FA(3) is written by the domain, not the writer: its own revision stands for it.
  const revision = format === 'ksef' ? FA3_REVISION : 1;
  return hasher.sha256Hex(canonicalJson({ format: `e-invoice/${format}/${revision}`, writer: writerVersion, invoice }));
}
