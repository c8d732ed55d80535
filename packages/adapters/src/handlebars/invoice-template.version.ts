import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * Bump when the printed page changes without a change to the template files:
 * the renderer's page settings (format, margins, scale), a Handlebars option,
 * the way the footer is laid. Every cached PDF then gets a new version.
 */
export const INVOICE_LAYOUT_REVISION = 2;

/** The files that make up the printed page; a new one belongs here too. */
const TEMPLATE_FILES = ['invoice.hbs', 'invoice-footer.hbs'] as const;

let memo: string | null = null;

/**
 * The version of the invoice layout: a hash of the template files' bytes and
 * INVOICE_LAYOUT_REVISION. It is part of every PDF's version (ETag and cache
 * key), so a changed template never serves a PDF printed with the old one.
 * Read once per process.
 */
export function invoiceTemplateVersion(): string {
  if (memo === null) {
    const hash = createHash('sha256').update(`layout-revision:${INVOICE_LAYOUT_REVISION}\n`);
    for (const name of TEMPLATE_FILES) {
      const bytes = readFileSync(new URL(`./${name}`, import.meta.url));
      hash.update(`${name}:${bytes.length}\n`).update(bytes);
    }
    memo = hash.digest('hex');
  }
  return memo;
}
