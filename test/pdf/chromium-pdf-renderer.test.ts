import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, chmod, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ChromiumPdfRenderer, createPdfRenderer, RenderTimeoutError, runAsBulkWork, sweepCrashHandlerDirs, type InvoiceHtmlTemplate } from '@logi/adapters';
import { loadConfig } from '@logi/config';
import { buildInvoiceDocument, xmlSafeText, type CompanyDetails, type DocumentLanguage, type InvoiceDetail, type InvoiceDocument } from '@logi/domain';
import { sampleInvoice } from '../domain/fakes.js';
import { childChromiumPids, collapse, crashHandlers, pdfText } from './pdf-tools.helper.js';

/**
 * pdftotext's lines (the PDF on its stdin), each trimmed, empty ones left out: in reading order (a
 * party's lines one under another), or with `layout` as laid out (a table row on one line).
 */
async function pdfLines(pdf: Buffer, layout = false): Promise<string[]> {
  const child = spawn('pdftotext', [...(layout ? ['-layout'] : []), '-enc', 'UTF-8', '-', '-'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const exited = once(child, 'close');
  child.stdin.end(pdf);
  const [code] = (await exited) as [number | null];
  if (code !== 0) throw new Error(`pdftotext exited with ${code}`);
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n')
    .map((line) => (layout ? line : line.replace(/[\s\u00a0]+/g, ' ').trim()))
    .filter((line) => line !== '');
}

const seller: CompanyDetails = {
  name: 'Baltic Haulage Sp. z o.o.',
  address: 'ul. Portowa 4\n80-001 Gdańsk\nPolska',
  vat: 'PL5860000000',
  bankAccount: 'PL61 1090 1014 0000 0712 1981 2874',
  bankName: 'Santander Bank Polska',
};

function documentFor(lang: DocumentLanguage, overrides: Partial<InvoiceDetail> = {}, duplicate = false): InvoiceDocument {
  const invoice = sampleInvoice({ currency: 'EUR', amountNet: 12000, amountTax: 2345.67, amountGross: 14345.67, leftToPay: 14345.67, ...overrides });
  return buildInvoiceDocument(invoice, seller, lang, duplicate, 'Europe/Warsaw');
}

/** Per language: a customer and a label whose diacritics must survive into the PDF text. */
const cases: Record<DocumentLanguage, { customer: string; label: string; title: string; gross: string; mark: string }> = {
  cs: {
    customer: 'Přeprava Žďár Říčany s.r.o.',
    label: 'Datum uskutečnění zdanitelného plnění',
    title: 'Faktura – daňový doklad',
    gross: '14 345,67 €',
    mark: 'DUPLIKÁT',
  },
  de: { customer: 'Müller Spedition Großenhain GmbH', label: 'Beträge in EUR', title: 'Rechnung', gross: '14.345,67 €', mark: 'DUPLIKAT' },
  en: { customer: 'Thames Freight Ltd', label: 'Date of supply', title: 'Invoice', gross: '€14,345.67', mark: 'DUPLICATE' },
  pl: { customer: 'Źródło Łódź Spedycja Sp. z o.o.', label: 'Data sprzedaży', title: 'Faktura VAT', gross: '14 345,67 €', mark: 'DUPLIKAT' },
  ro: { customer: 'Transporturi Șerban Țăranu S.R.L.', label: 'Data scadenței', title: 'Factură', gross: '14.345,67 EUR', mark: 'DUPLICAT' },
  tr: { customer: 'Doğan Taşımacılık İstanbul A.Ş.', label: 'Düzenleme tarihi', title: 'Fatura', gross: '€14.345,67', mark: 'İKİNCİ NÜSHA' },
};

/** A local server that counts every request: a document that reached it would have leaked. */
let server: Server;
let serverHits: string[];
let serverUrl: string;
let renderer: ChromiumPdfRenderer;

beforeAll(async () => {
  serverHits = [];
  server = createServer((req, res) => {
    serverHits.push(req.url ?? '');
    res.end('body { color: red }');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  renderer = new ChromiumPdfRenderer({ rendersPerBrowser: 100, renderTimeoutMs: 20_000, poolSize: 2 });
});

afterAll(async () => {
  await renderer?.close();
  await new Promise((resolve) => server?.close(resolve));
});

/**
 * Launches the browser and prints one page before a test of the render limit: a browser launch counts
 * in that limit, and on a loaded machine a launch alone can take longer than the 1.5 s these tests
 * allow. A launch that runs over is tried again (bounded); the state waited for is a warm renderer.
 */
async function warmUp(renderer: ChromiumPdfRenderer): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await renderer.ping();
      await renderer.render(documentFor('en'));
      return;
    } catch (error) {
      if (!(error instanceof RenderTimeoutError) || attempt === 5) throw error;
    }
  }
}

describe('ChromiumPdfRenderer', () => {
  describe.each(Object.keys(cases) as DocumentLanguage[])('when a duplicate is printed in %s', (lang) => {
    const want = cases[lang];

    it('then the PDF text holds the title, number, customer, gross amount, duplicate mark and every diacritic', async () => {
      const pdf = await renderer.render(documentFor(lang, { customerName: want.customer }, true));
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
      const text = await pdfText(pdf);
      expect(text).toContain(want.title);
      expect(text).toContain('FV/11/2026/0007');
      expect(text).toContain(want.customer);
      expect(text).toContain(collapse(want.gross));
      expect(text).toContain(want.mark);
      expect(text).toContain(want.label);
    });
  });

  describe.each([
    {
      lang: 'pl',
      buyerCountry: 'Polska',
      sellerCountry: 'Polska',
      buyerVat: 'NIP: 5252345678',
      sellerVat: 'NIP: PL5860000000',
      pieces: 'szt.',
      hours: 'godz.',
    },
    {
      lang: 'pl',
      buyerCountry: 'Rumunia',
      sellerCountry: 'Polska',
      buyerVat: 'NIP UE: RO18547290',
      sellerVat: 'NIP: PL5860000000',
      pieces: 'szt.',
      hours: 'godz.',
    },
    {
      lang: 'ro',
      buyerCountry: 'România',
      sellerCountry: 'Polonia',
      buyerVat: 'CIF: RO18547290',
      sellerVat: 'Cod TVA: PL5860000000',
      pieces: 'buc.',
      hours: 'ore',
    },
    {
      lang: 'tr',
      buyerCountry: 'Türkiye',
      sellerCountry: 'Polonya',
      buyerVat: 'VKN: 9876543210',
      sellerVat: 'Vergi No: PL5860000000',
      pieces: 'adet',
      hours: 'saat',
    },
  ] as const)('when a $lang invoice is printed for a buyer in $buyerCountry whose address ends in its country', (want) => {
    const buyers = {
      Polska: { customerVat: '5252345678', customerCountry: 'pl', customerAddress: 'ul. Źródlana 5\n80-180 Gdańsk\nPolska' },
      Rumunia: { customerVat: 'RO18547290', customerCountry: 'ro', customerAddress: 'Str. Lungă 44\n500035 Brașov\nRomânia' },
      România: { customerVat: 'RO18547290', customerCountry: 'ro', customerAddress: 'Str. Lungă 44\n500035 Brașov\nRomânia' },
      Türkiye: { customerVat: '9876543210', customerCountry: 'tr', customerAddress: 'Ertuğrul Gazi Cd. 7\n16140 Nilüfer/Bursa\nTürkiye' },
    } as const;
    const buyer = buyers[want.buyerCountry];
    let lines: string[];
    let laidOut: string[];

    beforeAll(async () => {
      const items = [
        { name: 'Road freight', quantity: 2, unit: 'pcs', unitPriceNet: 100, taxRate: '23', amountNet: 200, amountTax: 46, amountGross: 246 },
        { name: 'Waiting time', quantity: 3, unit: 'h', unitPriceNet: 40, taxRate: '23', amountNet: 120, amountTax: 27.6, amountGross: 147.6 },
      ];
      const pdf = await renderer.render(documentFor(want.lang, { ...buyer, items }));
      [lines, laidOut] = await Promise.all([pdfLines(pdf), pdfLines(pdf, true)]);
    });

    it('then each country is printed once, in the document language, under its address', () => {
      const street = buyer.customerAddress.split('\n');
      const buyerAt = lines.indexOf(street[0]!);
      expect(lines.slice(buyerAt, buyerAt + 3)).toEqual([street[0], street[1], want.buyerCountry]);
      const sellerAt = lines.indexOf('ul. Portowa 4');
      expect(lines.slice(sellerAt, sellerAt + 3)).toEqual(['ul. Portowa 4', '80-001 Gdańsk', want.sellerCountry]);
      const countryLines = lines.filter((line) => /^(Polska|Poland|Polonia|Polonya|România|Romania|Rumunia|Romanya|Türkiye)$/.test(line));
      expect(countryLines.sort()).toEqual([want.buyerCountry, want.sellerCountry].sort());
    });

    it('then each VAT id carries the label that language gives an id of its country', () => {
      expect(lines).toContain(want.sellerVat);
      expect(lines).toContain(want.buyerVat);
    });

    it('then the units are the words of that language', () => {
      // An item row as laid out: position, name, then quantity and unit one space apart.
      const cells = (name: string) => /^\s*\d+ (\S+(?: \S+)*)\s{2,}(\S+) (\S+)\s{2,}/.exec(laidOut.find((line) => line.includes(` ${name} `)) ?? '')?.slice(1);
      expect(cells('Road freight')).toEqual(['Road freight', '2', want.pieces]);
      expect(cells('Waiting time')).toEqual(['Waiting time', '3', want.hours]);
    });
  });

  it('when the seller and the customer are named in any script (combining marks, emoji, right-to-left, what XML forbids), then the PDF text holds each name, less what XML forbids', async () => {
    const names = [
      'SIA Kuļļi',
      'ООО «Ромашка»',
      'Ελληνική Μεταφορική Α.Ε.',
      'İĞŞıöç Lojistik A.Ş.',
      'Cafe\u0301 Transports',
      'Emoji 🚚 Freight 👨‍👩‍👧',
      'הובלות ישראל',
      'شركة النقل',
      'Con\u0001trol\uFFFF chars',
    ];
    for (const name of names) {
      const printed = buildInvoiceDocument(sampleInvoice({ customerName: name }), { ...seller, name }, 'en', false, 'UTC');
      const text = (await pdfText(await renderer.render(printed))).normalize('NFC');
      const safe = xmlSafeText(name).normalize('NFC');
      // Printed twice, in the seller's block and the buyer's; pdftotext may read a wrapped line in another order than
      // it was laid out (a seller's line split around the buyer's), so each word of the name is counted.
      for (const word of safe.split(' ')) expect(text.split(word).length - 1, `${name}: ${word}`).toBeGreaterThanOrEqual(2);
      expect(text, name).not.toContain('\uFFFD');
    }
  });

  it('when the copy is an original, then no duplicate mark is printed', async () => {
    const text = await pdfText(await renderer.render(documentFor('en', {}, false)));
    expect(text).toContain('Invoice');
    expect(text).not.toContain('DUPLICATE');
  });

  it('when it is a correcting invoice, then the corrected invoice number and related orders with CMR are printed', async () => {
    const doc = documentFor('pl', {
      type: 'c',
      correctOf: { id: 9000, nr: 'FV/10/2026/0099' },
      orders: [{ type: 'FTL', nr: 'BH/2026/0412', cmr: 'CMR 778120', tasks: [], files: [], contacts: [] }],
    });
    const text = await pdfText(await renderer.render(doc));
    expect(text).toContain('Faktura korygująca');
    expect(text).toContain('Korekta do faktury nr FV/10/2026/0099');
    expect(text).toContain('BH/2026/0412');
    expect(text).toContain('CMR 778120');
    expect(text).toContain('PL61 1090 1014 0000 0712 1981 2874');
  });

  it('when values hold markup, then it prints literally and the renderer makes no request at all', async () => {
    const before = renderer.stats.blockedRequests;
    const hostile = `<img src=file:///etc/passwd> <script>document.title='x'</script> <img src="${serverUrl}/leak">`;
    const pdf = await renderer.render(documentFor('en', { customerName: hostile, customerAddress: `<link rel=stylesheet href="${serverUrl}/css">` }));
    const text = await pdfText(pdf);
    expect(text).toContain('<img src=file:///etc/passwd>');
    expect(text).toContain("<script>document.title='x'</script>");
    expect(text).toContain(`<img src="${serverUrl}/leak">`);
    expect(text).not.toMatch(/root:.*:0:0:/);
    expect(renderer.stats.blockedRequests - before).toBe(0);
    expect(serverHits).toEqual([]);
  });

  it('when a document itself asks for network or files, then every request is blocked before it leaves', async () => {
    // Defense in depth: even HTML that escaped the template's escaping reaches nothing.
    const hostileTemplate: InvoiceHtmlTemplate = {
      html: () => `<!DOCTYPE html><html><head>
        <link rel="stylesheet" href="${serverUrl}/style.css">
        <style>@import url("${serverUrl}/import.css"); @font-face { font-family: x; src: url("${serverUrl}/font.woff2"); } body { font-family: x; }</style>
        </head><body><p>hostile page</p>
        <img src="${serverUrl}/pixel.png"><img src="file:///etc/passwd"><iframe src="file:///etc/passwd"></iframe>
        <iframe src="${serverUrl}/frame"></iframe><script src="${serverUrl}/script.js"></script>
        </body></html>`,
      footer: () => '<span></span>',
    };
    const isolated = new ChromiumPdfRenderer({ rendersPerBrowser: 10, renderTimeoutMs: 20_000, template: hostileTemplate });
    try {
      const text = await pdfText(await isolated.render(documentFor('en')));
      expect(text).toContain('hostile page');
      expect(text).not.toMatch(/root:.*:0:0:/);
      expect(isolated.stats.blockedRequests).toBeGreaterThanOrEqual(3);
      expect(serverHits).toEqual([]);
    } finally {
      await isolated.close();
    }
  });

  it('when several documents are printed at once, then each PDF holds its own invoice', async () => {
    const numbers = Array.from({ length: 7 }, (_, i) => `FV/CONC/${i + 1}`);
    const launchedBefore = renderer.stats.browsersLaunched;
    const pdfs = await Promise.all(numbers.map((nr) => renderer.render(documentFor('de', { nr }))));
    const texts = await Promise.all(pdfs.map(pdfText));
    texts.forEach((text, i) => {
      expect(text).toContain(numbers[i]);
      for (const other of numbers.filter((_, j) => j !== i)) expect(text).not.toContain(`${other} `);
    });
    expect(renderer.stats.browsersLaunched).toBe(launchedBefore);
  });

  it('when a render runs over the time limit, then it fails with a clear error and the next render succeeds', async () => {
    const limited = new ChromiumPdfRenderer({ rendersPerBrowser: 100, renderTimeoutMs: 1_500 });
    try {
      await warmUp(limited);
      // Thousands of rows take several seconds to lay out, far over the limit.
      const items = Array.from({ length: 10_000 }, (_, i) => ({
        name: `Pallet ${i}`,
        quantity: 1,
        unit: 'pcs',
        unitPriceNet: 1,
        taxRate: '23',
        amountNet: 1,
        amountTax: 0.23,
        amountGross: 1.23,
      }));
      const started = Date.now();
      const error = await limited.render(documentFor('en', { items })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RenderTimeoutError);
      expect((error as Error).message).toBe('PDF render took longer than 1500 ms and was stopped');
      // Stopped at the limit (plus the page's close), not after the whole document was laid out.
      expect(Date.now() - started).toBeLessThan(6_000);

      const text = await pdfText(await limited.render(documentFor('en', { nr: 'FV/AFTER/1' })));
      expect(text).toContain('FV/AFTER/1');
    } finally {
      await limited.close();
    }
  });

  it('when renders queue for the only page longer than the render limit, then the waiting one gives up at the limit and the page is not lost', async () => {
    const single = new ChromiumPdfRenderer({ rendersPerBrowser: 100, renderTimeoutMs: 1_500, poolSize: 1 });
    try {
      await warmUp(single);
      const items = Array.from({ length: 10_000 }, (_, i) => ({
        name: `Pallet ${i}`,
        quantity: 1,
        unit: 'pcs',
        unitPriceNet: 1,
        taxRate: '23',
        amountNet: 1,
        amountTax: 0.23,
        amountGross: 1.23,
      }));
      const started = Date.now();
      const slow = single.render(documentFor('en', { items })).catch((e: unknown) => e);
      const waiting = await single.render(documentFor('en', { nr: 'FV/WAITING/1' })).catch((e: unknown) => e);
      expect(waiting).toBeInstanceOf(RenderTimeoutError);
      expect((waiting as Error).message).toBe('PDF render waited longer than 1500 ms for a free page and was given up');
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await slow).toBeInstanceOf(RenderTimeoutError);
      // The one who gave up left the line: the page goes to the next caller, not to nobody.
      expect(await pdfText(await single.render(documentFor('en', { nr: 'FV/AFTER/2' })))).toContain('FV/AFTER/2');
    } finally {
      await single.close();
    }
  });

  it('when a render is no longer wanted once its page is free, then it prints nothing and the page serves the next render', async () => {
    const single = new ChromiumPdfRenderer({ rendersPerBrowser: 100, renderTimeoutMs: 60_000, poolSize: 1 });
    try {
      await warmUp(single);
      const asked: string[] = [];
      let wanted = true;
      const holding = single.render(documentFor('en', { nr: 'FV/HOLDING/1' }));
      // Waits for the page the first render holds; its caller's look-up ends meanwhile (the PDF was found).
      const unwanted = single.render(documentFor('en', { nr: 'FV/UNWANTED/1' }), {
        stillWanted: () => {
          asked.push(wanted ? 'wanted' : 'not wanted');
          return wanted;
        },
      });
      wanted = false;
      expect(await pdfText(await holding)).toContain('FV/HOLDING/1');
      expect(await unwanted).toBeNull();
      expect(asked).toEqual(['not wanted']);
      const next = await single.render(documentFor('en', { nr: 'FV/NEXT/1' }), { stillWanted: () => true });
      expect(await pdfText(next!)).toContain('FV/NEXT/1');
    } finally {
      await single.close();
    }
  });

  it('when exports keep both pages busy, then a request still finds one: bulk renders hold one page and the request ends before the backlog', async () => {
    const two = new ChromiumPdfRenderer({ rendersPerBrowser: 100, renderTimeoutMs: 60_000, poolSize: 2 });
    try {
      // Both pages open and warm, by clients' renders: a page stays kept for the next one (ADR 0059).
      await Promise.all([two.render(documentFor('en')), two.render(documentFor('en'))]);
      const finished: string[] = [];
      const bulk = Array.from({ length: 6 }, (_, i) =>
        runAsBulkWork(true, () => two.render(documentFor('en', { nr: `FV/BULK/${i + 1}` }))).then(() => finished.push(`bulk${i + 1}`)),
      );
      const request = two.render(documentFor('en', { nr: 'FV/REQUEST/1' })).then(() => finished.push('request'));
      await Promise.all([...bulk, request]);
      // Bulk renders go one page at a time; the request, on the page kept for it, ends within one render's time of
      // coming, so before the third bulk render (the first holds its page, the second waits for it).
      expect(finished.indexOf('request')).toBeLessThan(finished.indexOf('bulk3'));
      expect(finished.filter((name) => name.startsWith('bulk'))).toEqual(['bulk1', 'bulk2', 'bulk3', 'bulk4', 'bulk5', 'bulk6']);
    } finally {
      await two.close();
    }
  });

  it('when the browser hangs at start, then the render fails at the render limit, not the launch default', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hung-chromium-'));
    const hung = path.join(dir, 'chromium');
    // Starts and never speaks the DevTools protocol, like a browser stuck on a broken GPU or disk.
    await writeFile(hung, `#!/bin/sh\necho $$ > '${dir}/pid'\nexec sleep 60\n`);
    await chmod(hung, 0o755);
    const stuck = new ChromiumPdfRenderer({ chromiumPath: hung, rendersPerBrowser: 100, renderTimeoutMs: 1_000 });
    try {
      const started = Date.now();
      const error = await stuck.render(documentFor('en')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RenderTimeoutError);
      expect((error as Error).message).toBe('PDF render took longer than 1000 ms and was stopped');
      expect(Date.now() - started).toBeLessThan(3_000);
      // The launch has the same bound, so close() does not wait on it for long either.
      const closing = Date.now();
      await stuck.close();
      expect(Date.now() - closing).toBeLessThan(2_000);
    } finally {
      await stuck.close();
      // Playwright kills a browser that never came up only after its own 30 s close grace.
      const pid = Number(await readFile(path.join(dir, 'pid'), 'utf8').catch(() => ''));
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('when WORKER_CONCURRENCY is set, then the renderer built from the configuration has that many pages', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'pool-config-'));
    try {
      expect(createPdfRenderer(loadConfig({ DATA_DIR: dataDir, WORKER_CONCURRENCY: '5' })).poolSize).toBe(5);
      expect(createPdfRenderer(loadConfig({ DATA_DIR: dataDir })).poolSize).toBe(2);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('when a browser has printed its share, then a fresh one takes over and the old one exits', async () => {
    const before = new Set(await childChromiumPids());
    const cycling = new ChromiumPdfRenderer({ rendersPerBrowser: 2, renderTimeoutMs: 20_000 });
    try {
      for (let i = 1; i <= 5; i++) {
        const text = await pdfText(await cycling.render(documentFor('en', { nr: `FV/CYCLE/${i}` })));
        expect(text).toContain(`FV/CYCLE/${i}`);
      }
      expect(cycling.stats.browsersLaunched).toBe(3);
      // Retired browsers close in the background once idle; only the current one stays.
      await vi.waitFor(async () => expect((await childChromiumPids()).filter((pid) => !before.has(pid))).toHaveLength(1), { timeout: 10_000 });
    } finally {
      await cycling.close();
    }
  });

  it('when browsers are replaced and closed, then their crash handlers are killed and their crash directories removed', async () => {
    // Chromium double-forks two crash handlers per browser to init: nothing would wait for them.
    const before = new Set(crashHandlers().map((handler) => handler.pid));
    const cycling = new ChromiumPdfRenderer({ rendersPerBrowser: 1, renderTimeoutMs: 20_000 });
    // This process's browsers' handlers, not those of another test run on the machine: the directory names its pid.
    const ours = `logi-chromium-crash-${process.pid}-`;
    const mine = async () => crashHandlers().filter((handler) => !before.has(handler.pid) && path.basename(handler.database).startsWith(ours));
    const seen = new Map<number, string>();
    try {
      for (let i = 1; i <= 3; i++) {
        await cycling.render(documentFor('en', { nr: `FV/CRASHPAD/${i}` }));
        for (const handler of await mine()) seen.set(handler.pid, handler.database);
      }
      expect(cycling.stats.browsersLaunched).toBe(3);
      // Each browser's handlers name a crash database of its own under the temp dir, not the user's home.
      const databases = new Set(seen.values());
      expect(databases.size).toBeGreaterThanOrEqual(2);
      for (const database of databases) expect(path.basename(database)).toMatch(/^logi-chromium-crash-/);
      // The retired browsers' handlers go once their browser has closed; the current browser keeps its own.
      await vi.waitFor(async () => expect(new Set((await mine()).map((handler) => handler.database)).size).toBeLessThanOrEqual(1), { timeout: 10_000 });
    } finally {
      await cycling.close();
    }
    // close() resolves once every handler it started is gone and every crash directory removed.
    expect(await mine()).toEqual([]);
    for (const database of new Set(seen.values())) await expect(access(database)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('when a killed worker left crash directories, then the renderer sweeps away the old ones no handler names and keeps the rest', async () => {
    const leftOver = path.join(os.tmpdir(), `logi-chromium-crash-test-old-${process.pid}`);
    const recent = path.join(os.tmpdir(), `logi-chromium-crash-test-new-${process.pid}`);
    await mkdir(path.join(leftOver, 'completed'), { recursive: true });
    await mkdir(recent, { recursive: true });
    const hourAgo = new Date(Date.now() - 3_600_000);
    await utimes(leftOver, hourAgo, hourAgo);
    const live = new ChromiumPdfRenderer({ rendersPerBrowser: 100, renderTimeoutMs: 20_000 });
    try {
      // The renderer sweeps by itself as it launches its first browser.
      await live.ping();
      await vi.waitFor(() => expect(access(leftOver)).rejects.toMatchObject({ code: 'ENOENT' }), { timeout: 5_000 });
      // A live browser's directory stays however old, and so does one too young to tell from a browser still starting.
      const database = crashHandlers().find((handler) => path.basename(handler.database).startsWith('logi-chromium-crash-'))?.database;
      expect(database).toBeDefined();
      await utimes(database!, hourAgo, hourAgo);
      await sweepCrashHandlerDirs();
      await access(recent);
      await access(database!);
    } finally {
      await live.close();
      await rm(leftOver, { recursive: true, force: true });
      await rm(recent, { recursive: true, force: true });
    }
  });

  it('when the browser process dies, then the next render launches a new one and succeeds', async () => {
    const before = new Set(await childChromiumPids());
    const fragile = new ChromiumPdfRenderer({ rendersPerBrowser: 100, renderTimeoutMs: 20_000 });
    try {
      await fragile.ping();
      const mine = (await childChromiumPids()).filter((pid) => !before.has(pid));
      expect(mine).toHaveLength(1);
      process.kill(mine[0]!, 'SIGKILL');

      const text = await pdfText(await fragile.render(documentFor('en', { nr: 'FV/REVIVED/1' })));
      expect(text).toContain('FV/REVIVED/1');
      expect(fragile.stats.browsersLaunched).toBe(2);
    } finally {
      await fragile.close();
    }
  });

  it('when ping is called, then the browser is launched; after close, renders are refused', async () => {
    const pinged = new ChromiumPdfRenderer({ rendersPerBrowser: 5, renderTimeoutMs: 20_000 });
    expect(pinged.stats.browsersLaunched).toBe(0);
    await pinged.ping();
    expect(pinged.stats.browsersLaunched).toBe(1);
    await pinged.close();
    await expect(pinged.render(documentFor('en'))).rejects.toThrow('The PDF renderer is closed');
  });

  it('when CHROMIUM_PATH points nowhere, then rendering fails naming the path', async () => {
    const missing = new ChromiumPdfRenderer({ chromiumPath: '/nonexistent/chromium', rendersPerBrowser: 5, renderTimeoutMs: 5_000 });
    await expect(missing.ping()).rejects.toThrow('No Chromium at CHROMIUM_PATH /nonexistent/chromium');
    await expect(missing.render(documentFor('en'))).rejects.toThrow('/nonexistent/chromium');
    await missing.close();
  });
});
