import { describe, expect, it } from 'vitest';
import {
  InvoiceNotFoundError,
  RenderInvoicePdfUseCase,
  type Client,
  type ClientRepositoryPort,
  type InvoiceDocument,
  type JobPayloads,
  type JobResults,
  type PdfJobStage,
  type PdfRendererPort,
  type RenderOptions,
  pdfCacheKey,
} from '@logi/domain';
import { FakeHasher, FakeInvoices, FakeStorage, sampleInvoice } from './fakes.js';

const TEMPLATE = { hasher: new FakeHasher(), templateVersion: 'template-v1' };

class FakeClients implements ClientRepositoryPort {
  constructor(readonly clients: Client[]) {}
  async findByDirectory(directory: string) {
    return this.clients.find((c) => c.directory === directory) ?? null;
  }
  async upsert(): Promise<Client> {
    throw new Error('not used');
  }
  async list() {
    return this.clients;
  }
}

/**
 * Records what it was asked to print and "prints" the title. A page comes after a turn of the event loop (a busy
 * renderer: whatever the caller started beside it has ended) or, with `pageAtOnce`, before anything else runs.
 */
class FakeRenderer implements PdfRendererPort {
  readonly documents: InvoiceDocument[] = [];
  /** Renders whose caller no longer wanted them once a page was free. */
  unwanted = 0;
  pageAtOnce = false;
  render(document: InvoiceDocument): Promise<Buffer>;
  render(document: InvoiceDocument, options: RenderOptions): Promise<Buffer | null>;
  async render(document: InvoiceDocument, options: RenderOptions = {}): Promise<Buffer | null> {
    if (!this.pageAtOnce) await new Promise((resolve) => setImmediate(resolve));
    if (options.stillWanted?.() === false) {
      this.unwanted += 1;
      return null;
    }
    this.documents.push(document);
    return Buffer.from(`%PDF ${document.title} ${document.number}`);
  }
  async ping() {}
  async close() {}
}

const baltic: Client = {
  id: 1,
  directory: 'baltic',
  name: 'Baltic',
  company: { name: 'Baltic Haulage Sp. z o.o.', address: 'ul. Portowa 4', vat: 'PL5860000000', bankAccount: 'PL61 1090', bankName: 'Santander' },
};

function setup() {
  const invoices = new FakeInvoices([sampleInvoice({ id: 9001, directory: 'baltic' }), sampleInvoice({ id: 9002, directory: 'other' })]);
  const storage = new FakeStorage();
  const renderer = new FakeRenderer();
  const useCase = new RenderInvoicePdfUseCase({ invoices, clients: new FakeClients([baltic]), renderer, storage, timeZone: 'Europe/Warsaw', ...TEMPLATE });
  return { useCase, storage, renderer };
}

const job = (overrides: Partial<JobPayloads['render-invoice-pdf']> = {}): JobPayloads['render-invoice-pdf'] => ({
  directory: 'baltic',
  invoiceId: 9001,
  deadline: Date.UTC(2100, 0, 1),
  lang: 'pl',
  duplicate: true,
  pdfKey: 'pdf/abc.pdf',
  requestId: 'req-1',
  ...overrides,
});

describe('RenderInvoicePdfUseCase', () => {
  it('when the invoice exists, then its PDF is stored under the job key and the size is returned', async () => {
    const { useCase, storage, renderer } = setup();
    const result = await useCase.execute(job());
    const stored = storage.objects.get('pdf/abc.pdf');
    expect(stored?.toString()).toBe('%PDF Faktura VAT FV/11/2026/0007');
    expect(result).toEqual({ pdfKey: 'pdf/abc.pdf', bytes: stored!.length, invoiceNr: 'FV/11/2026/0007', version: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(renderer.documents[0]).toMatchObject({ lang: 'pl', duplicateMark: 'DUPLIKAT', seller: { name: 'Baltic Haulage Sp. z o.o.' } });
  });

  it('when the render ends after the caller stopped waiting, then nothing is stored', async () => {
    const storage = new FakeStorage();
    let clock = 1_000;
    const renderer = new FakeRenderer();
    const render = renderer.render.bind(renderer);
    renderer.render = (async (document: InvoiceDocument, options: RenderOptions = {}) => {
      clock = 3_000;
      return render(document, options);
    }) as FakeRenderer['render'];
    const invoices = new FakeInvoices([sampleInvoice({ id: 9001, directory: 'baltic' })]);
    const useCase = new RenderInvoicePdfUseCase({
      invoices,
      clients: new FakeClients([baltic]),
      renderer,
      storage,
      timeZone: 'UTC',
      now: () => clock,
      ...TEMPLATE,
    });
    expect(await useCase.execute(job({ deadline: 2_000 }))).toMatchObject({ bytes: 0 });
    expect(renderer.documents).toHaveLength(1);
    expect(storage.objects.size).toBe(0);
  });

  it('when the job starts after the caller stopped waiting (a backlog, a retry), then nothing is rendered or stored', async () => {
    const { useCase, storage, renderer } = setup();
    expect(await useCase.execute(job({ deadline: Date.now() - 1 }))).toMatchObject({ bytes: 0 });
    expect(renderer.documents).toHaveLength(0);
    expect(storage.objects.size).toBe(0);
  });

  it('when the invoice is missing, then InvoiceNotFoundError is thrown and nothing is rendered or stored', async () => {
    const { useCase, storage, renderer } = setup();
    await expect(useCase.execute(job({ invoiceId: 1 }))).rejects.toBeInstanceOf(InvoiceNotFoundError);
    expect(renderer.documents).toHaveLength(0);
    expect(storage.objects.size).toBe(0);
  });

  it('when the invoice belongs to another directory, then it is missing', async () => {
    const { useCase } = setup();
    const error = await useCase.execute(job({ invoiceId: 9002 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvoiceNotFoundError);
    expect(error).toMatchObject({ code: 'INVOICE_NOT_FOUND', message: 'Invoice not found' });
  });

  it('when dates are printed, then they are read in the configured time zone', async () => {
    const renderer = new FakeRenderer();
    // 2025-11-30 23:30 UTC is 1 December in Warsaw.
    const invoices = new FakeInvoices([sampleInvoice({ id: 9001, directory: 'baltic', issueDate: 1764545400 })]);
    const warsaw = new RenderInvoicePdfUseCase({
      invoices,
      clients: new FakeClients([baltic]),
      renderer,
      storage: new FakeStorage(),
      timeZone: 'Europe/Warsaw',
      ...TEMPLATE,
    });
    await warsaw.execute(job({ lang: 'de' }));
    expect(renderer.documents.at(-1)?.dates.issueDate).toBe('01.12.2025');
  });

  it('when the cache is asked for, then the PDF is kept under the version of what was printed and handed over from there', async () => {
    const { useCase, storage, renderer } = setup();
    const result = await useCase.execute(job({ cache: true }));
    expect(result.pdfKey).toBe(pdfCacheKey(result.version!, 'baltic'));
    expect(storage.objects.get(result.pdfKey)?.toString()).toBe('%PDF Faktura VAT FV/11/2026/0007');
    expect(storage.objects.has('pdf/abc.pdf')).toBe(false);
    expect(renderer.documents).toHaveLength(1);
  });

  it('when another job kept the same version meanwhile (two misses at once), then it is used and nothing is rendered', async () => {
    const { useCase, storage, renderer } = setup();
    const first = await useCase.execute(job({ cache: true }));
    const second = await useCase.execute(job({ cache: true, pdfKey: 'pdf/def.pdf' }));
    expect(second).toMatchObject({ pdfKey: first.pdfKey, version: first.version });
    expect(renderer.documents).toHaveLength(1);
    expect([...storage.objects.keys()]).toEqual([first.pdfKey]);
  });

  it('when the look-up finds the PDF before a page is free, then the render gives its page back unprinted', async () => {
    const { useCase, storage, renderer } = setup();
    const first = await useCase.execute(job({ cache: true }));
    const second = await useCase.execute(job({ cache: true, pdfKey: 'pdf/def.pdf' }));
    expect(second).toEqual({ pdfKey: first.pdfKey, bytes: 0, invoiceNr: 'FV/11/2026/0007', version: first.version });
    expect(renderer.unwanted).toBe(1);
    expect(renderer.documents).toHaveLength(1);
    expect([...storage.objects.keys()]).toEqual([first.pdfKey]);
  });

  it('when a page is free before the look-up ends and it finds the PDF, then the print is dropped and the found copy answers', async () => {
    const { useCase, storage, renderer } = setup();
    const first = await useCase.execute(job({ cache: true }));
    const kept = storage.objects.get(first.pdfKey);
    const puts: string[] = [];
    const put = storage.putBuffer.bind(storage);
    storage.putBuffer = async (key, data) => {
      puts.push(key);
      return put(key, data);
    };
    renderer.pageAtOnce = true;
    const second = await useCase.execute(job({ cache: true, pdfKey: 'pdf/def.pdf' }));
    expect(second).toEqual({ pdfKey: first.pdfKey, bytes: 0, invoiceNr: 'FV/11/2026/0007', version: first.version });
    expect(renderer.documents).toHaveLength(2);
    expect(puts).toEqual([]);
    expect(storage.objects.get(first.pdfKey)).toBe(kept);
  });

  it('when the look-up fails, then it counts as a miss: the PDF is printed and kept', async () => {
    const { useCase, storage, renderer } = setup();
    storage.exists = async () => {
      throw new Error('Storage unavailable: HEAD timed out');
    };
    const result = await useCase.execute(job({ cache: true }));
    expect(result).toMatchObject({ pdfKey: pdfCacheKey(result.version!, 'baltic'), bytes: expect.any(Number) });
    expect(result.bytes).toBeGreaterThan(0);
    expect(renderer.documents).toHaveLength(1);
    expect(storage.objects.has(result.pdfKey)).toBe(true);
  });

  it('when the look-up runs beside the render, then each stage is told once and the render is timed from the data on', async () => {
    const storage = new FakeStorage();
    const renderer = new FakeRenderer();
    renderer.pageAtOnce = true;
    let clock = 1_000;
    const stages: Array<[PdfJobStage, number]> = [];
    const exists = storage.exists.bind(storage);
    storage.exists = async (key) => {
      clock += 5; // the HEAD's round trip
      return exists(key);
    };
    const render = renderer.render.bind(renderer);
    renderer.render = (async (document: InvoiceDocument, options: RenderOptions = {}) => {
      const pdf = await render(document, options);
      await new Promise((resolve) => setImmediate(resolve));
      clock += 40; // the print, which ends after the look
      return pdf;
    }) as FakeRenderer['render'];
    const useCase = new RenderInvoicePdfUseCase({
      invoices: new FakeInvoices([sampleInvoice({ id: 9001, directory: 'baltic' })]),
      clients: new FakeClients([baltic]),
      renderer,
      storage,
      timeZone: 'UTC',
      now: () => clock,
      onStage: (stage, ms) => stages.push([stage, ms]),
      ...TEMPLATE,
    });
    await useCase.execute(job({ cache: true }));
    expect(stages).toEqual([
      ['data', 0],
      ['cache_lookup', 5],
      ['render', 45],
      ['store', 0],
    ]);
  });

  it('when the queue can hand the PDF over, then it does so before the cache write, with the result the job ends with', async () => {
    const { useCase, storage } = setup();
    const order: string[] = [];
    const put = storage.putBuffer.bind(storage);
    storage.putBuffer = async (key, data) => {
      order.push(`put ${key}`);
      return put(key, data);
    };
    let handed: { result: JobResults['render-invoice-pdf']; pdf: Buffer } | null = null;
    const result = await useCase.execute(job({ cache: true }), {
      firstRun: true,
      handOverPdf: async (early, pdf) => {
        order.push('hand over');
        handed = { result: early, pdf };
      },
    });
    expect(order).toEqual(['hand over', `put ${result.pdfKey}`]);
    expect(handed).toEqual({ result, pdf: storage.objects.get(result.pdfKey) });
  });

  it('when the hand-over fails, then the job ends as without one', async () => {
    const { useCase, storage } = setup();
    const result = await useCase.execute(job({ cache: true }), {
      firstRun: true,
      handOverPdf: async () => {
        throw new Error('Redis unavailable');
      },
    });
    expect(result.pdfKey).toBe(pdfCacheKey(result.version!, 'baltic'));
    expect(storage.objects.has(result.pdfKey)).toBe(true);
  });

  it('when the cache cannot keep a PDF already handed over, then no hand-over copy is written and the reason comes back', async () => {
    const { useCase, storage } = setup();
    storage.putBuffer = async () => {
      throw new Error('Storage unavailable: quota');
    };
    const result = await useCase.execute(job({ cache: true }), { firstRun: true, handOverPdf: async () => undefined });
    expect(result).toMatchObject({ pdfKey: 'pdf/abc.pdf', cacheError: 'Storage unavailable: quota' });
    expect(result.bytes).toBeGreaterThan(0);
    expect(storage.objects.size).toBe(0);
  });

  it('when the cache cannot keep the PDF, then it is handed over under the job key and the reason comes back', async () => {
    const { useCase, storage } = setup();
    const put = storage.putBuffer.bind(storage);
    storage.putBuffer = async (key, data) => {
      if (key.startsWith('pdf-cache/')) throw new Error('Storage unavailable: quota');
      return put(key, data);
    };
    const result = await useCase.execute(job({ cache: true }));
    expect(result).toMatchObject({ pdfKey: 'pdf/abc.pdf', cacheError: 'Storage unavailable: quota' });
    expect([...storage.objects.keys()]).toEqual(['pdf/abc.pdf']);
  });

  it('when the language or the duplicate flag differ, then so does the version', async () => {
    const { useCase } = setup();
    const versions = new Set<string | undefined>();
    for (const [lang, duplicate] of [
      ['pl', true],
      ['pl', false],
      ['de', true],
    ] as const)
      versions.add((await useCase.execute(job({ lang, duplicate }))).version);
    expect(versions.size).toBe(3);
  });

  it('when storage fails, then the error reaches the caller', async () => {
    const { useCase, storage } = setup();
    storage.failing = true;
    await expect(useCase.execute(job())).rejects.toThrow(/Storage unavailable/);
  });
});
