import type { DocumentLanguage } from './invoice-document.js';
import type { InvoiceTranslation } from './invoice-translation.js';
import { csTranslation } from './translations/cs.translation.js';
import { deTranslation } from './translations/de.translation.js';
import { enTranslation } from './translations/en.translation.js';
import { plTranslation } from './translations/pl.translation.js';
import { roTranslation } from './translations/ro.translation.js';
import { trTranslation } from './translations/tr.translation.js';

/** One translation per document language; the type makes a missing language a compile error. */
export const INVOICE_TRANSLATIONS: Readonly<Record<DocumentLanguage, InvoiceTranslation>> = {
  cs: csTranslation,
  de: deTranslation,
  en: enTranslation,
  pl: plTranslation,
  ro: roTranslation,
  tr: trTranslation,
};
