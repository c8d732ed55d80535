import { readFileSync } from 'node:fs';
import type Handlebars from 'handlebars';
import type QRCode from 'qrcode';
import { INVOICE_TRANSLATIONS, xmlSafeData, type InvoiceDocument } from '@logi/domain';
import { lazyModule } from '../shared/lazy-module.js';

// Loaded when a template is made (a renderer's first use), not with the adapters: an API that
// leaves rendering to workers never loads it.
const handlebarsModule = lazyModule<typeof Handlebars>('handlebars');
const qrcodeModule = lazyModule<typeof QRCode>('qrcode');

/** Lays an invoice document out as HTML for a print engine. */
export interface InvoiceHtmlTemplate {
  /** The full A4 page. */
  html(document: InvoiceDocument): string;
  /** The running footer printed on every page (Chromium's footerTemplate). */
  footer(document: InvoiceDocument): string;
}

function readTemplate(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');
}

/**
 * The invoice HTML, compiled once per instance (the composition root makes
 * one). Runs in its own Handlebars environment so that no helper or partial
 * registered elsewhere can change escaping; strict mode turns a missing
 * field into an error instead of a silently blank line on a tax document.
 */
export class HandlebarsInvoiceTemplate implements InvoiceHtmlTemplate {
  private readonly page: Handlebars.TemplateDelegate<InvoiceDocument & { ksefQr: string | null }>;
  private readonly pageFooter: Handlebars.TemplateDelegate<InvoiceDocument>;

  constructor() {
    const handlebars = handlebarsModule().create();
    const options: CompileOptions = { strict: true, noEscape: false, preventIndent: true };
    this.page = handlebars.compile<InvoiceDocument & { ksefQr: string | null }>(readTemplate('invoice.hbs'), options);
    this.pageFooter = handlebars.compile<InvoiceDocument>(readTemplate('invoice-footer.hbs'), options);
    // Handlebars compiles lazily on first call; do it now so a broken template fails at start, not on a request.
    this.page({ ...SAMPLE, ksefQr: null });
    this.pageFooter(SAMPLE);
  }

  html(document: InvoiceDocument): string {
    // The QR code is drawn here, from the link the document holds: the document says what, the template how.
    const url = document.ksef?.verificationUrl;
    // Characters XML 1.0 forbids (C0 controls, U+FFFF, lone surrogates) are dropped here too: HTML prints them as
    // blanks or boxes, and the e-invoice of the same document drops them.
    return this.page({ ...xmlSafeData(document), ksefQr: url ? qrSvg(url) : null });
  }

  footer(document: InvoiceDocument): string {
    return this.pageFooter(xmlSafeData(document));
  }
}

/**
 * KOD I as an SVG (ISO/IEC 18004, error correction M, the quiet zone of four modules the standard asks for), one
 * path of dark modules; Handlebars prints it unescaped, so it holds nothing but numbers.
 */
function qrSvg(text: string): string {
  const { modules } = qrcodeModule().create(text, { errorCorrectionLevel: 'M' });
  const quiet = 4;
  const size = modules.size + 2 * quiet;
  let path = '';
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) if (modules.get(row, col)) path += `M${col + quiet} ${row + quiet}h1v1h-1z`;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/><path d="${path}" fill="#000"/></svg>`;
}

/** A document with every field present, used only to force compilation at construction. */
const SAMPLE: InvoiceDocument = {
  lang: 'en',
  locale: 'en-GB',
  title: 'Invoice',
  duplicateMark: 'DUPLICATE',
  number: '1',
  labels: INVOICE_TRANSLATIONS.en.labels,
  seller: { name: 's', addressLines: ['a'], vat: 'v', vatLabel: 'l', country: 'c' },
  buyer: { name: 'b', addressLines: ['a'], vat: 'v', vatLabel: 'l', country: null },
  bank: { account: 'a', name: 'n' },
  dates: { issueDate: 'd', serviceDate: 'd', paymentTerm: 'd', paymentDate: 'd' },
  items: [{ position: 1, name: 'n', quantity: '1', unit: 'u', unitPriceNet: '1', taxRate: 'r', amountNet: '1', amountTax: '1', amountGross: '1' }],
  amountsIn: 'EUR',
  taxSummary: [{ taxRate: 'r', net: '1', tax: '1', gross: '1' }],
  totals: { net: '1', tax: '1', gross: '1', paid: '1', leftToPay: '1' },
  orders: [{ type: 't', nr: 'n', cmr: 'c' }],
  correction: { nr: 'n', text: 't' },
  ksef: { number: 'k', verificationUrl: 'u' },
  currency: 'EUR',
  status: 's',
};
