import { describe, expect, it } from 'vitest';
import {
  DocumentNotWritableError,
  DownloadInvoicePdfUseCase,
  ServiceUnavailableError,
  RenderInvoicePdfUseCase,
  ValidationError,
  type EInvoice,
  type EInvoiceWriterPort,
  type InvoiceDocument,
  type PdfRendererPort,
  pdfCacheKey,
} from '@logi/domain';
import { balticClient, FakeClients, FakeHasher, FakeInvoices, FakeQueue, FakeStorage, sampleInvoice } from './fakes.js';

class FakeRenderer implements PdfRendererPort {
  async render(document: InvoiceDocument) {
    return Buffer.from(`%PDF ${document.number}`);
  }
  async ping() {}
  async close() {}
}

class FakeWriter implements EInvoiceWriterPort {
  readonly version = 'writer/1';
  embedded: EInvoice[] = [];
  /** What facturX throws instead, when set. */
  fails: Error | null = null;
  async xml(invoice: EInvoice) {
    return `<cii ${invoice.number}/>`;
  }
  async facturX(pdf: Buffer, invoice: EInvoice) {
    if (this.fails) throw this.fails;
    this.embedded.push(invoice);
    return Buffer.concat([pdf, Buffer.from(` +factur-x ${invoice.typeCode}`)]);
  }
}

function setup() {
  const invoices = new FakeInvoices([sampleInvoice()]);
  const clients = new FakeClients([balticClient]);
  const storage = new FakeStorage();
  const hasher = new FakeHasher();
  const writer = new FakeWriter();
  const render = new RenderInvoicePdfUseCase({
    invoices,
    clients,
    renderer: new FakeRenderer(),
    storage,
    hasher,
    templateVersion: 't1',
    timeZone: 'UTC',
    eInvoiceWriter: writer,
    now: () => 5_000,
  });
  const queue = new FakeQueue(() => ({ 'render-invoice-pdf': (payload) => render.execute(payload) }));
  let ids = 0;
  const useCase = new DownloadInvoicePdfUseCase({
    invoices,
    clients,
    storage,
    queue,
    hasher,
    templateVersion: 't1',
    eInvoiceWriterVersion: writer.version,
    timeZone: 'UTC',
    cache: true,
    jobTimeoutMs: 1000,
    newId: () => `id${++ids}`,
    now: () => 5_000,
  });
  const download = (query: Array<[string, string]>) => useCase.execute({ directory: 'baltic', invoiceId: 9001, query, requestId: 'r' });
  return { download, writer, storage };
}

describe('Factur-X downloads', () => {
  it('when format=facturx, then the render job embeds the e-invoice of the same invoice, under its own version and cache object', async () => {
    const { download, writer, storage } = setup();
    const plain = await download([]);
    const facturX = await download([
      ['format', 'facturx'],
      ['lang', 'de'],
    ]);
    expect(plain.kind === 'pdf' && plain.pdf.toString()).toBe('%PDF FV/11/2026/0007');
    expect(facturX.kind === 'pdf' && facturX.pdf.toString()).toBe('%PDF FV/11/2026/0007 +factur-x 380');
    expect(writer.embedded).toHaveLength(1);
    expect(writer.embedded[0]).toMatchObject({ number: 'FV/11/2026/0007', lang: 'de' });
    expect(facturX.version).not.toBe(plain.version);
    expect([...storage.objects.keys()].filter((key) => key.startsWith('pdf-cache/')).sort()).toEqual(
      [pdfCacheKey(facturX.version, 'baltic'), pdfCacheKey(plain.version, 'baltic')].sort(),
    );
    const cached = await download([
      ['format', 'facturx'],
      ['lang', 'de'],
    ]);
    expect(cached).toMatchObject({ kind: 'pdf', source: 'cache', version: facturX.version });
    expect(writer.embedded).toHaveLength(1);
  });

  it('when format is not pdf or facturx, then a validation error naming format', async () => {
    const { download } = setup();
    const error = await download([['format', 'ubl']]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(Object.keys((error as ValidationError).errors)).toEqual(['format']);
  });

  it('when the writer refuses the invoice (the same request would fail again), then DocumentNotWritableError (a 500), not a 503 clients retry', async () => {
    const { download, writer } = setup();
    writer.fails = new Error('Invalid character in XMP packet');
    const error = await download([['format', 'facturx']]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DocumentNotWritableError);
    expect(error).not.toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({ code: 'DOCUMENT_NOT_WRITABLE', document: 'facturx', detail: 'Invalid character in XMP packet', message: 'Server Error' });
  });
});
