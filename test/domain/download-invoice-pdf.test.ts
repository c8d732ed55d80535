import { describe, expect, it, vi } from 'vitest';
import {
  DownloadInvoicePdfUseCase,
  InvoiceNotFoundError,
  RenderInvoicePdfUseCase,
  ServiceUnavailableError,
  ValidationError,
  type InvoiceDocument,
  type JobPayloads,
  type JobResults,
  type PdfCacheEvent,
  type PdfRendererPort,
  RecentPdfs,
  pdfCacheKey,
} from '@logi/domain';
import { balticClient, FakeClients, FakeHasher, FakeInvoices, FakeQueue, FakeStorage, sampleInvoice } from './fakes.js';

/** "Prints" the title, number and total, so a changed invoice gives other bytes. */
class FakeRenderer implements PdfRendererPort {
  renders = 0;
  async render(document: InvoiceDocument) {
    this.renders += 1;
    return Buffer.from(`%PDF ${document.title} ${document.number} ${document.totals.gross} #${this.renders}`);
  }
  async ping() {}
  async close() {}
}

function setup(
  options: {
    cache?: boolean;
    templateVersion?: string;
    storage?: FakeStorage;
    invoices?: FakeInvoices;
    recent?: RecentPdfs;
    /** The queue answers with the PDF a job hands over before its cache write, as both queues do (ADR 0057). */
    handOver?: boolean;
  } = {},
) {
  const invoices = options.invoices ?? new FakeInvoices([sampleInvoice()]);
  const storage = options.storage ?? new FakeStorage();
  const clients = new FakeClients([balticClient]);
  const hasher = new FakeHasher();
  const renderer = new FakeRenderer();
  const templateVersion = options.templateVersion ?? 'template-v1';
  const render = new RenderInvoicePdfUseCase({ invoices, clients, renderer, storage, hasher, templateVersion, timeZone: 'UTC', now: () => 5_000 });
  const jobs: JobPayloads['render-invoice-pdf'][] = [];
  /** Each job's whole run (with `handOver`, the answer comes before it ends). */
  const jobsRun: Array<Promise<unknown>> = [];
  const queue = new FakeQueue(() => ({
    'render-invoice-pdf': async (payload) => {
      jobs.push(payload);
      if (!options.handOver) return render.execute(payload);
      return new Promise<JobResults['render-invoice-pdf']>((resolve, reject) => {
        const job = render.execute(payload, { firstRun: true, handOverPdf: async (result, pdf) => resolve({ ...result, pdf }) });
        jobsRun.push(job.catch(() => undefined));
        job.then(resolve, reject);
      });
    },
  }));
  const events: PdfCacheEvent[] = [];
  let ids = 0;
  const useCase = new DownloadInvoicePdfUseCase({
    invoices,
    clients,
    storage,
    queue,
    hasher,
    templateVersion,
    timeZone: 'UTC',
    cache: options.cache ?? true,
    jobTimeoutMs: 1000,
    newId: () => `id${++ids}`,
    onCacheEvent: (event) => events.push(event),
    ...(options.recent ? { recent: options.recent } : {}),
    now: () => 5_000,
  });
  return { useCase, storage, jobs, jobsRun, queue, renderer, invoices, clients, events };
}

const download = (useCase: DownloadInvoicePdfUseCase, query = '', clientHolds?: (version: string) => boolean) =>
  useCase.execute({ directory: 'baltic', invoiceId: 9001, query: new URLSearchParams(query), requestId: 'r1', clientHolds });

describe('download invoice pdf', () => {
  it('when the invoice exists, then the job renders it, the PDF and its version come back, and only the cached copy stays in storage', async () => {
    const { useCase, storage, jobs } = setup();
    const result = await download(useCase, 'lang=pl&duplicate=1');
    expect(result).toMatchObject({ kind: 'pdf', source: 'render', invoiceNr: 'FV/11/2026/0007', version: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(jobs).toEqual([
      { directory: 'baltic', invoiceId: 9001, lang: 'pl', duplicate: true, pdfKey: 'pdf/id1.pdf', cache: true, requestId: 'r1', deadline: 5_900 },
    ]);
    expect([...storage.objects.keys()]).toEqual([pdfCacheKey(result.version, 'baltic')]);
  });

  it('when the cache misses, then the miss is told by the read itself: no look at whether the object exists, one render', async () => {
    const storage = new FakeStorage();
    const looks: string[] = [];
    const exists = storage.exists.bind(storage);
    storage.exists = async (key) => {
      looks.push(key);
      return exists(key);
    };
    const { useCase, jobs, events } = setup({ storage });
    await download(useCase, 'lang=de');
    // The one look is the render job's, before it renders (another request may have rendered it meanwhile).
    expect(looks).toEqual([expect.stringMatching(/^pdf-cache\//)]);
    expect(jobs).toHaveLength(1);
    expect(events.map((event) => event.outcome)).toEqual(['miss']);
  });

  it('when the same PDF is asked again, then it is read from the cache: same bytes, same version, no job, no render', async () => {
    const { useCase, jobs, renderer, events } = setup();
    const first = await download(useCase);
    const second = await download(useCase);
    expect(second).toMatchObject({ kind: 'pdf', source: 'cache', version: first.version, invoiceNr: 'FV/11/2026/0007' });
    expect(second.kind === 'pdf' && first.kind === 'pdf' && second.pdf.equals(first.pdf)).toBe(true);
    expect(jobs).toHaveLength(1);
    expect(renderer.renders).toBe(1);
    expect(events.map((e) => e.outcome)).toEqual(['miss', 'hit']);
  });

  it('when the client holds the current version, then not-modified before any job or storage read', async () => {
    const { useCase, jobs, storage, events } = setup();
    const first = await download(useCase);
    storage.objects.clear();
    const again = await download(useCase, '', (version) => version === first.version);
    expect(again).toEqual({ kind: 'not-modified', invoiceNr: 'FV/11/2026/0007', version: first.version });
    expect(jobs).toHaveLength(1);
    expect(events.at(-1)?.outcome).toBe('not-modified');
  });

  it('when the client holds another version, then the PDF comes', async () => {
    const { useCase } = setup();
    expect((await download(useCase, '', (version) => version === 'f'.repeat(64))).kind).toBe('pdf');
  });

  it('when the invoice data changes, then a new version and a new render; the old PDF is not served', async () => {
    const { useCase, invoices, renderer } = setup();
    const before = await download(useCase);
    invoices.invoices[0] = sampleInvoice({ amountGross: 1500, leftToPay: 1500 });
    const after = await download(useCase);
    expect(after.version).not.toBe(before.version);
    expect(after).toMatchObject({ kind: 'pdf', source: 'render' });
    expect(renderer.renders).toBe(2);
  });

  it('when the seller, the language, the duplicate flag or the template change, then the version changes', async () => {
    const base = await download(setup().useCase);
    const versions = new Set([base.version]);
    versions.add((await download(setup().useCase, 'lang=de')).version);
    versions.add((await download(setup().useCase, 'duplicate=1')).version);
    versions.add((await download(setup({ templateVersion: 'template-v2' }).useCase)).version);
    const moved = setup();
    balticClient.company.address = 'ul. Nowa 1';
    try {
      versions.add((await download(moved.useCase)).version);
    } finally {
      balticClient.company.address = 'ul. Portowa 4';
    }
    expect(versions.size).toBe(5);
    expect((await download(setup().useCase)).version).toBe(base.version);
  });

  it('when the cache is off, then every download renders and nothing stays in storage, with the same version', async () => {
    const { useCase, storage, renderer, jobs } = setup({ cache: false });
    const first = await download(useCase);
    const second = await download(useCase);
    expect(renderer.renders).toBe(2);
    expect(jobs.every((job) => job.cache === false)).toBe(true);
    expect(second.version).toBe(first.version);
    expect(storage.objects.size).toBe(0);
  });

  it('when the cached copy cannot be read, then the PDF is rendered and the failure reported', async () => {
    const { useCase, storage, events, renderer } = setup();
    await download(useCase);
    storage.getBuffer = async (key) => {
      if (key.startsWith('pdf-cache/')) throw new Error('Storage unavailable: ECONNRESET');
      return storage.objects.get(key)!;
    };
    const answer = await download(useCase);
    expect(answer).toMatchObject({ kind: 'pdf', source: 'render' });
    // Rendered again past the cache (the unreadable copy would have stopped the job from rendering).
    expect(renderer.renders).toBe(2);
    expect(events.at(-1)).toMatchObject({ outcome: 'read-failed', error: 'Storage unavailable: ECONNRESET' });
  });

  it('when storage hands back an empty object, then it is never served: the render answers 503, an empty cached copy is rendered past', async () => {
    // Cache off: the job's PDF is read back from its own key.
    const uncached = setup({ cache: false });
    const readUncached = uncached.storage.getBuffer.bind(uncached.storage);
    uncached.storage.getBuffer = async (key) => (key.startsWith('pdf/') ? Buffer.alloc(0) : readUncached(key));
    await expect(download(uncached.useCase)).rejects.toBeInstanceOf(ServiceUnavailableError);

    // Cache on: an empty cached copy counts as unreadable, and the PDF is rendered past it.
    const { useCase, storage, events, renderer } = setup();
    await download(useCase);
    const read = storage.getBuffer.bind(storage);
    storage.getBuffer = async (key) => (key.startsWith('pdf-cache/') ? Buffer.alloc(0) : read(key));
    const answer = await download(useCase);
    expect(answer).toMatchObject({ kind: 'pdf', source: 'render' });
    expect(answer.kind === 'pdf' && answer.pdf.length).toBeGreaterThan(0);
    expect(renderer.renders).toBe(2);
    expect(events.at(-1)).toMatchObject({ outcome: 'read-failed', error: expect.stringContaining('empty object') });
  });

  it('when the cache cannot keep the PDF, then the client still gets it and the failure is reported', async () => {
    const storage = new FakeStorage();
    const put = storage.putBuffer.bind(storage);
    storage.putBuffer = async (key, data) => {
      if (key.startsWith('pdf-cache/')) throw new Error('Storage unavailable: quota');
      return put(key, data);
    };
    const { useCase, events } = setup({ storage });
    const answer = await download(useCase);
    expect(answer).toMatchObject({ kind: 'pdf', source: 'render' });
    expect(answer.kind === 'pdf' && answer.pdf.toString().startsWith('%PDF')).toBe(true);
    expect(events.map((e) => e.outcome)).toEqual(['miss', 'store-failed']);
    expect(storage.objects.size).toBe(0);
  });

  it('when nothing is asked, then English and no duplicate mark', async () => {
    const { useCase, jobs } = setup();
    await download(useCase);
    expect(jobs[0]).toMatchObject({ lang: 'en', duplicate: false });
  });

  it('when the invoice is missing, then 404 wins over an invalid query', async () => {
    const { useCase } = setup();
    await expect(useCase.execute({ directory: 'baltic', invoiceId: 1, query: new URLSearchParams('lang=xx'), requestId: 'r' })).rejects.toBeInstanceOf(
      InvoiceNotFoundError,
    );
    await expect(useCase.execute({ directory: 'alpine', invoiceId: 9001, query: [], requestId: 'r' })).rejects.toBeInstanceOf(InvoiceNotFoundError);
  });

  it('when the invoice is read, then the seller is read beside it, not after it; a missing invoice is 404 even if the seller read fails', async () => {
    const { useCase, invoices, clients } = setup();
    const reads: string[] = [];
    let answerInvoice!: () => void;
    const invoiceAnswered = new Promise<void>((resolve) => (answerInvoice = resolve));
    const findDetail = invoices.findDetail.bind(invoices);
    vi.spyOn(invoices, 'findDetail').mockImplementation(async (directory, id) => {
      reads.push('invoice asked');
      await invoiceAnswered;
      reads.push('invoice answered');
      return findDetail(directory, id);
    });
    const findByDirectory = clients.findByDirectory.bind(clients);
    vi.spyOn(clients, 'findByDirectory').mockImplementation(async (directory) => {
      reads.push('seller asked');
      return findByDirectory(directory);
    });
    const downloaded = download(useCase);
    await vi.waitFor(() => expect(reads).toEqual(['seller asked', 'invoice asked']));
    answerInvoice();
    expect((await downloaded).kind).toBe('pdf');
    // The download's print, then its job's.
    const oneLoad = ['seller asked', 'invoice asked', 'invoice answered'];
    expect(reads).toEqual([...oneLoad, ...oneLoad]);

    vi.spyOn(clients, 'findByDirectory').mockRejectedValue(new Error('connection lost'));
    await expect(useCase.execute({ directory: 'baltic', invoiceId: 1, query: [], requestId: 'r' })).rejects.toBeInstanceOf(InvoiceNotFoundError);
  });

  it.each(['lang=EN', 'lang=fr', 'lang=e', 'duplicate=yes', 'duplicate=TRUE', 'lang=en&lang=pl', 'duplicate[]=1'])(
    'when %s, then the query is invalid',
    async (qs) => {
      const { useCase } = setup();
      const error = await download(useCase, qs).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toBe('The given data was invalid.');
    },
  );

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('when duplicate=%s, then the flag is %s', async (value, flag) => {
    const { useCase, jobs } = setup();
    await download(useCase, `duplicate=${value}`);
    expect(jobs[0]!.duplicate).toBe(flag);
  });

  it('when the renderer fails, then the answer is 503 and nothing is left in storage', async () => {
    const { useCase, storage, queue } = setup();
    queue.unavailable = new Error('browser crashed');
    await expect(download(useCase)).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(storage.objects.size).toBe(0);
  });
});

describe('download invoice pdf, remembered by the process (RecentPdfs)', () => {
  const recent = () => new RecentPdfs({ versions: 100, pdfBytes: 1024 * 1024 });

  it('when the same download is asked again at the same data version, then neither the invoice nor storage is read again, and the bytes and version are the same', async () => {
    const { useCase, invoices, storage } = setup({ recent: recent() });
    const first = await download(useCase, 'lang=de');
    const findDetail = vi.spyOn(invoices, 'findDetail');
    const getBuffer = vi.spyOn(storage, 'getBuffer');
    const second = await download(useCase, 'lang=de');
    expect(second).toMatchObject({ kind: 'pdf', source: 'cache', version: first.version, invoiceNr: 'FV/11/2026/0007' });
    expect(second.kind === 'pdf' && first.kind === 'pdf' && second.pdf.equals(first.pdf)).toBe(true);
    expect(findDetail).not.toHaveBeenCalled();
    expect(getBuffer).not.toHaveBeenCalled();
  });

  it('when the data version changed, then the invoice is read and printed again, and a changed invoice gets a new version and a new render', async () => {
    const { useCase, invoices, renderer } = setup({ recent: recent() });
    const first = await download(useCase);
    invoices.invoices[0] = sampleInvoice({ nr: 'FV/11/2026/0008' });
    // Not bumped yet: the process still answers with what it printed, as it would have before the write committed.
    expect(await download(useCase)).toMatchObject({ version: first.version, invoiceNr: 'FV/11/2026/0007' });
    invoices.version += 1;
    const changed = await download(useCase);
    expect(changed).toMatchObject({ kind: 'pdf', source: 'render', invoiceNr: 'FV/11/2026/0008' });
    expect(changed.version).not.toBe(first.version);
    expect(renderer.renders).toBe(2);
  });

  it('when a remembered download holds its version, then 304 without a read; another language or an invalid query is not the remembered one', async () => {
    const { useCase, invoices } = setup({ recent: recent() });
    const first = await download(useCase);
    const findDetail = vi.spyOn(invoices, 'findDetail');
    expect(await download(useCase, '', (v) => v === first.version)).toMatchObject({ kind: 'not-modified', version: first.version });
    expect(findDetail).not.toHaveBeenCalled();
    const polish = await download(useCase, 'lang=pl');
    expect(polish.version).not.toBe(first.version);
    // Once to print it here, once in the render job.
    expect(findDetail).toHaveBeenCalledTimes(2);
    await expect(download(useCase, 'lang=xx')).rejects.toBeInstanceOf(ValidationError);
  });

  it('when the invoice is gone, then a remembered download of it is no longer served once the version moved', async () => {
    const { useCase, invoices } = setup({ recent: recent() });
    await download(useCase);
    invoices.invoices.length = 0;
    invoices.version += 1;
    await expect(download(useCase)).rejects.toBeInstanceOf(InvoiceNotFoundError);
  });

  it('when the queue hands nothing over (a worker of an older release), then the PDF is read back from the cache after the job', async () => {
    const { useCase, storage } = setup({ recent: recent() });
    const getBuffer = vi.spyOn(storage, 'getBuffer');
    const result = await download(useCase, 'lang=pl');
    const key = pdfCacheKey(result.version, 'baltic');
    expect(getBuffer.mock.calls.map(([read]) => read)).toEqual([key, key]);
  });

  it('when the queue hands the PDF over before the job keeps it, then those bytes answer, storage is not read back, and the cache still gets them', async () => {
    const storage = new FakeStorage();
    let cacheWritten!: () => void;
    const written = new Promise<void>((resolve) => (cacheWritten = resolve));
    const put = storage.putBuffer.bind(storage);
    storage.putBuffer = async (key, bytes, type) => {
      await put(key, bytes, type);
      if (key.startsWith('pdf-cache/')) cacheWritten();
    };
    const getBuffer = vi.spyOn(storage, 'getBuffer');
    const { useCase } = setup({ recent: recent(), handOver: true, storage });
    const result = await download(useCase, 'lang=pl');
    const key = pdfCacheKey(result.version, 'baltic');
    expect(result.kind === 'pdf' && result.pdf.toString()).toMatch(/^%PDF .* FV\/11\/2026\/0007 .* #1$/);
    expect(getBuffer.mock.calls.map(([read]) => read)).toEqual([key]);
    await written;
    expect(result.kind === 'pdf' && storage.objects.get(key)?.equals(result.pdf)).toBe(true);
  });

  it('when a job answers with a key of another directory or a version that is not one (a forged result), then 503 and nothing is read', async () => {
    const { useCase, storage, queue } = setup({ recent: recent() });
    const other = pdfCacheKey('a'.repeat(64), 'other-directory');
    storage.objects.set(other, Buffer.from('%PDF another directory'));
    const getBuffer = vi.spyOn(storage, 'getBuffer');
    for (const forged of [
      { pdfKey: other, bytes: 22, invoiceNr: 'FV/1', version: 'a'.repeat(64) },
      // This download's own hand-over key (its job is the second), with a version that would break the ETag header.
      { pdfKey: 'pdf/id2.pdf', bytes: 22, invoiceNr: 'FV/1', version: '"\r\nSet-Cookie: x' },
    ]) {
      vi.spyOn(queue, 'runAndWait').mockResolvedValueOnce(forged);
      getBuffer.mockClear();
      await expect(download(useCase, 'lang=pl')).rejects.toBeInstanceOf(ServiceUnavailableError);
      // The one read is the API's own cache look before the job.
      expect(getBuffer.mock.calls.map(([key]) => key)).toHaveLength(1);
      expect(getBuffer.mock.calls[0]![0]).not.toBe(other);
    }
  });

  it('when the cache cannot keep a PDF the queue handed over, then the client still gets it, nothing else is read, and no hand-over copy is left', async () => {
    const storage = new FakeStorage();
    storage.putBuffer = async () => {
      throw new Error('Storage quota exceeded');
    };
    const getBuffer = vi.spyOn(storage, 'getBuffer');
    const { useCase, jobsRun } = setup({ recent: recent(), handOver: true, storage });
    const result = await download(useCase, 'lang=pl');
    expect(result.kind === 'pdf' && result.pdf.toString()).toMatch(/^%PDF .* FV\/11\/2026\/0007 .* #1$/);
    await Promise.all(jobsRun);
    expect(await jobsRun[0]).toMatchObject({ cacheError: 'Storage quota exceeded' });
    expect(getBuffer.mock.calls.map(([key]) => key)).toEqual([pdfCacheKey(result.version, 'baltic')]);
    expect(storage.objects.size).toBe(0);
  });

  it('when the PDF cache is off, then nothing is kept in memory and every download renders', async () => {
    const { useCase, renderer } = setup({ cache: false, recent: recent() });
    await download(useCase);
    await download(useCase);
    expect(renderer.renders).toBe(2);
  });
});

describe('RecentPdfs bounds', () => {
  it('keeps at most the configured bytes of PDFs, dropping the least recently used first, and never one over a quarter of the budget', () => {
    const recent = new RecentPdfs({ versions: 10, pdfBytes: 100 });
    recent.rememberPdf('a', Buffer.alloc(25));
    recent.rememberPdf('b', Buffer.alloc(25));
    recent.rememberPdf('c', Buffer.alloc(25));
    expect(recent.pdf('a')?.length).toBe(25);
    recent.rememberPdf('d', Buffer.alloc(25));
    recent.rememberPdf('e', Buffer.alloc(25));
    expect(['a', 'b', 'c', 'd', 'e'].filter((v) => recent.pdf(v) !== null)).toEqual(['a', 'c', 'd', 'e']);
    recent.rememberPdf('big', Buffer.alloc(26));
    expect(recent.pdf('big')).toBeNull();
  });

  it('keeps at most the configured number of printed versions, and forgets one read under another data version', () => {
    const recent = new RecentPdfs({ versions: 2, pdfBytes: 0 });
    recent.rememberPrinted('k1', '1', { version: 'v1', invoiceNr: 'A' });
    recent.rememberPrinted('k2', '1', { version: 'v2', invoiceNr: 'B' });
    recent.rememberPrinted('k3', '1', { version: 'v3', invoiceNr: 'C' });
    expect(recent.printed('k1', '1')).toBeNull();
    expect(recent.printed('k2', '1')).toEqual({ version: 'v2', invoiceNr: 'B' });
    expect(recent.printed('k3', '2')).toBeNull();
    expect(recent.printed('k3', '1')).toBeNull();
    recent.rememberPdf('v2', Buffer.alloc(1));
    expect(recent.pdf('v2')).toBeNull();
  });
});
