import { describe, expect, it } from 'vitest';
import {
  invoicesCsv,
  parseExportRequest,
  RunExportUseCase,
  toInvoiceListItem,
  ValidationError,
  type ArchiveBuilder,
  type ClaimedExport,
  type DownloadEInvoiceUseCase,
  type DownloadInvoicePdfUseCase,
  type Export,
  type ExportArchivePort,
  type ExportFailureReport,
  type ExportRunObserver,
  type ExportRepositoryPort,
} from '@logi/domain';
import { FakeInvoices, FakeStorage, sampleInvoice } from './fakes.js';
import { parseCsv } from '../support/csv.js';

const context = { directory: 'baltic', now: new Date('2026-11-26T12:00:00Z'), timeZone: 'Europe/Warsaw' };

describe('parseExportRequest', () => {
  it('when nothing is sent, then every default: pdf, en, no duplicate, a CSV, no filters', () => {
    expect(parseExportRequest({}, context)).toEqual({ filters: {}, documents: ['pdf'], lang: 'en', duplicate: false, csv: true });
  });

  it('when filters hold empty values and unknown names, then those count as absent, as in the list', () => {
    expect(parseExportRequest({ filters: { period: 'prev_month', search: '', colour: 'red' } }, context).filters).toEqual({ period: 'prev_month' });
  });

  it('when documents repeat or come in another order, then each counts once in the fixed order; duplicate takes the PDF spellings', () => {
    const parsed = parseExportRequest({ documents: ['cii', 'pdf', 'cii'], duplicate: '1' }, context);
    expect(parsed.documents).toEqual(['pdf', 'cii']);
    expect(parsed.duplicate).toBe(true);
  });

  it('when a filter breaks a list rule, then the error names filters.<param> with the list’s message', () => {
    const error = (() => {
      try {
        parseExportRequest({ filters: { period: 'custom' } }, context);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect(Object.keys((error as ValidationError).errors)).toEqual(['filters.date_from']);
  });
});

describe('invoicesCsv', () => {
  it('when fields hold commas, quotes, line breaks or nulls, then RFC 4180 quoting, empty fields and CRLF line ends', () => {
    const item = toInvoiceListItem(sampleInvoice({ id: 7, customerName: 'Kowalski, "Jan"\nSp. z o.o.', paymentDate: null }));
    const lines = invoicesCsv([item]).split('\r\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    const row = lines[1]!;
    expect(row.startsWith('7,')).toBe(true);
    expect(row).toContain('"Kowalski, ""Jan""\nSp. z o.o."');
    expect(row).toContain(',,');
  });

  it('when a text field starts like a formula (=, +, -, @, tab, CR), then it gets a leading quote mark, and numbers, negative ones too, stay as they are', () => {
    const names = ['=HYPERLINK("http://x.test","y")', '+48 123', '-x', '@SUM(A1)', '\tTab', '\rReturn', 'Plain, "name"', "'quoted already"];
    const items = names.map((name, index) =>
      toInvoiceListItem(sampleInvoice({ id: index + 1, customerName: name, customerVat: index === 0 ? '-PL123' : 'PL123', amountNet: -120.5 })),
    );
    const [header, ...rows] = parseCsv(invoicesCsv(items));
    const column = (name: string) => header!.indexOf(name);
    expect(rows.map((row) => row[column('customer_name')])).toEqual([
      `'=HYPERLINK("http://x.test","y")`,
      "'+48 123",
      "'-x",
      "'@SUM(A1)",
      "'\tTab",
      "'\rReturn",
      'Plain, "name"',
      "'quoted already",
    ]);
    expect(rows[0]![column('customer_vat')]).toBe("'-PL123");
    expect(rows.map((row) => row[column('amount_net')])).toEqual(names.map(() => '-120.5'));
    expect(rows.map((row) => Number(row[column('id')]))).toEqual(names.map((_, index) => index + 1));
  });
});

class FakeExports implements ExportRepositoryPort {
  /** What progress answers: false once the export was "deleted". */
  alive = true;
  succeedAnswer: 'succeeded' | 'lost' | 'over-budget' = 'succeeded';
  readonly calls: string[] = [];
  failure: string | null = null;
  constructor(readonly item: Export) {}
  async create() {
    return { refused: 'active' as const };
  }
  async list() {
    return [];
  }
  async find() {
    return null;
  }
  async listAll() {
    return [];
  }
  async archiveKey() {
    return null;
  }
  async remove() {
    return null;
  }
  async claimNext(): Promise<ClaimedExport | null> {
    this.calls.push('claim');
    return { export: this.item, attempt: 2 };
  }
  async start() {
    this.calls.push('start');
    return this.alive;
  }
  async progress() {
    this.calls.push('progress');
    return this.alive;
  }
  async succeed() {
    this.calls.push('succeed');
    return this.succeedAnswer;
  }
  async fail(_id: number, _attempt: number, values: { error: string }) {
    this.calls.push('fail');
    this.failure = values.error;
    return true;
  }
  async isRunning() {
    return false;
  }
  async listExpired() {
    return [];
  }
  async forgetArchive() {}
  async removeExpired() {
    return 0;
  }
}

class FakeArchives implements ExportArchivePort {
  readonly members: string[] = [];
  discarded = 0;
  async create(): Promise<ArchiveBuilder> {
    return {
      add: async (path, data) => {
        this.members.push(path);
        return { path, size: Buffer.byteLength(data), sha256: 'x'.repeat(64) };
      },
      finish: async () => ({ localPath: '/tmp/export.zip', size: 10, sha256: 'a'.repeat(64) }),
      discard: async () => {
        this.discarded += 1;
      },
    };
  }
  async sweep() {
    return 0;
  }
}

function setup(
  options: {
    invoices?: number;
    onPdf?: (count: number) => void;
    pdfFails?: boolean;
    /** The PDF's bytes, and a render's time in macrotask turns (each render takes as many turns as its index modulo 3). */
    pdfBytes?: number;
    renderAhead?: number;
    renderAheadBytes?: number;
    archives?: FakeArchives;
  } = {},
) {
  const item: Export = {
    id: 5,
    directory: 'baltic',
    status: 'running',
    created: 1_764_000_000,
    started: null,
    finished: null,
    filters: {},
    documents: ['pdf'],
    lang: 'en',
    duplicate: false,
    csv: true,
    total: null,
    done: 0,
    eventsCursor: 0,
    size: null,
    sha256: null,
    expires: null,
    error: null,
  };
  const exports = new FakeExports(item);
  const storage = new FakeStorage();
  // An archive an earlier attempt stored before its worker died.
  storage.set('exports/5-1.zip', Buffer.from('partial'));
  const archives = options.archives ?? new FakeArchives();
  let rendered = 0;
  let clock = 0;
  const pdf = {
    execute: async () => {
      if (options.pdfFails) throw new Error('Chromium crashed at 0x7f');
      rendered += 1;
      options.onPdf?.(rendered);
      for (let turn = 0; turn < rendered % 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      const pdf = options.pdfBytes === undefined ? Buffer.from('%PDF') : Buffer.alloc(options.pdfBytes, 1);
      return { kind: 'pdf', invoiceNr: 'X', version: 'v', pdf, source: 'render' };
    },
  } as unknown as DownloadInvoicePdfUseCase;
  const invoices = new FakeInvoices(Array.from({ length: options.invoices ?? 3 }, (_, i) => sampleInvoice({ id: 100 + i, directory: 'baltic', nr: `N${i}` })));
  const reports: ExportFailureReport[] = [];
  const observed: string[] = [];
  const observer: ExportRunObserver = {
    started: () => observed.push('started'),
    ended: () => observed.push('ended'),
    succeeded: (bytes) => observed.push(`succeeded ${bytes}`),
    failed: (failure, final) => observed.push(`failed ${failure}${final ? ' final' : ''}`),
  };
  const run = new RunExportUseCase({
    report: (entry) => reports.push(entry),
    observer,
    exports,
    invoices,
    archives,
    storage,
    pdf,
    eInvoice: {} as DownloadEInvoiceUseCase,
    settings: {
      timeZone: 'UTC',
      maxInvoices: 100,
      retentionHours: 72,
      leaseMs: 30_000,
      progressIntervalMs: 1,
      renderAhead: options.renderAhead ?? 1,
      renderAheadBytes: options.renderAheadBytes ?? 1_000_000,
      maxAttempts: 3,
      maxKeptBytes: 1_000_000,
    },
    // Every reading moves the clock, so each invoice renews the lease (and sees a cancel).
    now: () => (clock += 10),
  });
  return { run, exports, storage, archives, reports, observed };
}

describe('RunExportUseCase', () => {
  it('when an attempt runs to the end, then the archive is stored under its attempt’s key, the earlier attempt’s leftover is removed, and it is marked succeeded', async () => {
    const { run, exports, storage, archives } = setup();
    expect(await run.execute()).toBe(true);
    expect(archives.members).toEqual(['invoices.csv', 'pdf/100.pdf', 'pdf/101.pdf', 'pdf/102.pdf', 'manifest.json']);
    expect([...storage.objects.keys()]).toEqual(['exports/5-2.zip']);
    expect(exports.calls.at(-1)).toBe('succeed');
    expect(archives.discarded).toBe(1);
  });

  it('when attempts run, then the observer (the runner’s metrics) sees each start and end, the archive’s bytes, and each failure with whether it was the last', async () => {
    const succeeded = setup();
    await succeeded.run.execute();
    const size = succeeded.storage.objects.get('exports/5-2.zip')!.length;
    expect(succeeded.observed).toEqual(['started', `succeeded ${size}`, 'ended']);

    const failing = setup();
    failing.exports.progress = async () => {
      throw new Error('ER_LOCK_WAIT_TIMEOUT');
    };
    await expect(failing.run.execute()).rejects.toThrow('ER_LOCK_WAIT_TIMEOUT');
    failing.exports.claimNext = async () => ({ export: failing.exports.item, attempt: 3 });
    await failing.run.execute();
    expect(failing.observed).toEqual(['started', 'failed database', 'ended', 'started', 'failed database final', 'ended']);

    const idle = setup();
    idle.exports.claimNext = async () => null;
    expect(await idle.run.execute()).toBe(false);
    expect(idle.observed).toEqual([]);
  });

  it('when the export is deleted while it runs, then it stops at the next renewal, stores nothing and removes its temporary file', async () => {
    const holder: { exports?: FakeExports } = {};
    const { run, exports, storage, archives } = setup({ invoices: 20, onPdf: (count) => count === 3 && (holder.exports!.alive = false) });
    holder.exports = exports;
    await run.execute();
    expect(archives.members.length).toBeLessThan(10);
    expect(archives.members).not.toContain('manifest.json');
    expect([...storage.objects.keys()]).toEqual([]);
    expect(exports.calls).not.toContain('succeed');
    expect(archives.discarded).toBe(1);
  });

  it('when storage fails while the archive is stored, then the export fails with the fixed text, the detail is reported with its id, and nothing is left', async () => {
    const { run, exports, storage, archives, reports } = setup();
    storage.failing = true;
    await run.execute();
    expect(exports.failure).toBe('Storage failed.');
    expect(reports).toEqual([
      expect.objectContaining({
        exportId: 5,
        attempt: 2,
        failure: 'storage',
        final: true,
        detail: expect.objectContaining({ message: 'Storage unavailable: connection refused' }),
      }),
    ]);
    expect([...storage.objects.keys()]).toEqual([]);
    expect(archives.discarded).toBe(1);
  });

  it('when the last attempt cannot render a document, then the export fails with `Rendering failed.` and the renderer’s message is only reported', async () => {
    const { run, exports, reports } = setup({ pdfFails: true });
    exports.claimNext = async () => ({ export: exports.item, attempt: 3 });
    expect(await run.execute()).toBe(true);
    expect(exports.failure).toBe('Rendering failed.');
    expect(exports.calls).toContain('fail');
    expect(reports).toEqual([
      expect.objectContaining({ exportId: 5, failure: 'rendering', final: true, detail: expect.objectContaining({ message: 'Chromium crashed at 0x7f' }) }),
    ]);
  });

  it('when the database fails before the last attempt, then the failure is reported as passing and thrown for the runner to back off; on the last, the export fails with `Database failed.`', async () => {
    const { run, exports, reports } = setup();
    exports.progress = async () => {
      throw new Error('ER_LOCK_WAIT_TIMEOUT: update `exports` set `done` = ?');
    };
    await expect(run.execute()).rejects.toThrow('ER_LOCK_WAIT_TIMEOUT');
    expect(exports.failure).toBeNull();
    expect(reports).toEqual([expect.objectContaining({ exportId: 5, attempt: 2, failure: 'database', final: false })]);
    exports.claimNext = async () => ({ export: exports.item, attempt: 3 });
    expect(await run.execute()).toBe(true);
    expect(exports.failure).toBe('Database failed.');
  });

  it('when an export was claimed more times than its attempts (its runners stopped), then it fails with `Cancelled.`', async () => {
    const { run, exports, reports } = setup();
    exports.claimNext = async () => ({ export: exports.item, attempt: 4 });
    expect(await run.execute()).toBe(true);
    expect(exports.failure).toBe('Cancelled.');
    expect(reports).toEqual([expect.objectContaining({ exportId: 5, attempt: 4, failure: 'cancelled', final: true })]);
  });

  it('when an archive would take its directory past the storage budget, then it is removed and the export fails with `Storage failed.`', async () => {
    const { run, exports, storage } = setup();
    exports.succeedAnswer = 'over-budget';
    await run.execute();
    expect(exports.failure).toBe('Storage failed.');
    expect([...storage.objects.keys()]).toEqual([]);
  });

  it('when the export was cancelled while its archive was being stored, then the stored archive is removed again', async () => {
    const { run, exports, storage } = setup();
    exports.succeedAnswer = 'lost';
    await run.execute();
    expect([...storage.objects.keys()]).toEqual([]);
  });

  it('when documents are made ahead, then no more than the count (renderAhead) are in flight and no render starts while those held reach the bytes bound', async () => {
    // Counted from the renders the PDF use case is asked for and the members the ZIP is given.
    let started = 0;
    let maxInFlight = 0;
    const archives = new FakeArchives();
    const inFlight = () => started - archives.members.filter((member) => member.startsWith('pdf/')).length;
    const byCount = setup({
      invoices: 30,
      pdfBytes: 1000,
      renderAhead: 4,
      renderAheadBytes: 1_000_000,
      archives,
      onPdf: () => {
        started += 1;
        maxInFlight = Math.max(maxInFlight, inFlight());
      },
    });
    await byCount.run.execute();
    expect(archives.members.filter((member) => member.startsWith('pdf/'))).toHaveLength(30);
    // The one being written and the 4 ahead of it.
    expect(maxInFlight).toBe(5);

    // 1000-byte PDFs, 2500 bytes ahead: once a PDF's size is known, at most 3 are held (2 reach 2000 < 2500, a third starts).
    started = 0;
    maxInFlight = 0;
    const bounded = new FakeArchives();
    const byBytes = setup({
      invoices: 30,
      pdfBytes: 1000,
      renderAhead: 10,
      renderAheadBytes: 2500,
      archives: bounded,
      onPdf: () => {
        started += 1;
        // The first 11 start before any size is known (nothing to count them by); the bound holds from then on.
        if (started > 11) maxInFlight = Math.max(maxInFlight, started - bounded.members.filter((member) => member.startsWith('pdf/')).length);
      },
    });
    await byBytes.run.execute();
    expect(bounded.members.filter((member) => member.startsWith('pdf/'))).toHaveLength(30);
    expect(maxInFlight).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(3);
  });
});
