import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type LogiClient } from '@logi/client';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { PDF_BYTES, PNG_BYTES } from '../support/multipart.js';
import { refusePngFiles, REFUSED_MESSAGE, sdkFor } from '../support/sdk-client.js';
import { DIRS, KEYS } from '../support/test-fixture.js';
import { pdfText } from '../pdf/pdf-tools.helper.js';

const run = promisify(execFile);
const EXAMPLE = path.resolve('packages/client/examples/quick-start.ts');

let api: TestApi;
let sdk: LogiClient & { urls: string[] };
let files: string;
beforeAll(async () => {
  api = await startTestApi({ APP_TIMEZONE: 'UTC' }, { now: new Date('2026-11-23T12:00:00Z'), label: 'sdk', beforeStart: refusePngFiles });
  sdk = sdkFor(api, 'baltic');
  files = await mkdtemp(path.join(tmpdir(), 'logi-sdk-'));
});
afterAll(async () => {
  await api?.stop();
  if (files) await rm(files, { recursive: true, force: true });
});

/** The ApiError a call rejects with. */
async function apiErrorOf(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

const ids = (list: { invoices: Array<{ id: number }> }) => list.invoices.map((invoice) => invoice.id);
const fileRows = async () => Number((await api.knex('order_files').count({ n: '*' }))[0]!.n);

describe('the SDK lists invoices', () => {
  it('when statuses are given as an array, then they are sent comma-separated and only those invoices come back', async () => {
    const list = await sdk.invoices.list({ statuses: ['overdue', 'paid'], sort_by: 'amount_gross', sort_dir: 'asc' });
    expect(ids(list)).toEqual([9002, 9003, 9007]);
    expect(list.invoices.map((invoice) => invoice.status)).toEqual(['paid', 'overdue', 'paid']);
    expect(list.pagination).toEqual({ page: 1, per_page: 250, total: 3, total_pages: 1 });
    expect(new URL(sdk.urls.at(-1)!).search).toBe('?statuses=overdue,paid&sort_by=amount_gross&sort_dir=asc');
  });

  it('when types, branch ids and VAT numbers are given as arrays, then every list filters', async () => {
    expect(ids(await sdk.invoices.list({ types: ['c', 'p'], branch_ids: [1, 3], sort_by: 'nr', sort_dir: 'asc' }))).toEqual([9005, 9006]);
    expect(ids(await sdk.invoices.list({ customer_vats: ['pl1234567890', 'CZ12345678'], sort_by: 'nr', sort_dir: 'asc' }))).toEqual([9002, 9006]);
    expect(new URL(sdk.urls.at(-1)!).searchParams.get('customer_vats')).toBe('pl1234567890,CZ12345678');
  });

  it('when a named or custom period is given, then the range applies and the pagination reports it', async () => {
    const november = await sdk.invoices.list({ period: 'cur_month', sort_by: 'issue_date', sort_dir: 'asc' });
    expect(ids(november)).toEqual([9005, 9006, 9001, 9002, 9009]);
    expect(november.pagination).toMatchObject({ date_field: 'issue_date', date_from: '2026-11-01', date_to: '2026-11-30', timezone: 'UTC' });
    const added = await sdk.invoices.list({ period: 'cur_month', date_field: 'added_date' });
    expect(added.pagination.total).toBe(6);
    const october = await sdk.invoices.list({ period: 'custom', date_from: '2026-10-01', date_to: '2026-10-31', sort_by: 'issue_date', sort_dir: 'asc' });
    expect(ids(october)).toEqual([9004, 9003]);
  });

  it('when a page past the first is asked, then it holds the rest in sort order, with the page count', async () => {
    const third = await sdk.invoices.list({ page: 3, per_page: 4, sort_by: 'issue_date', sort_dir: 'asc' });
    expect(ids(third)).toEqual([9009]);
    expect(third.pagination).toEqual({ page: 3, per_page: 4, total: 9, total_pages: 3 });
  });

  it('when searching by text, customer name or country, then each matches case-insensitively', async () => {
    expect(ids(await sdk.invoices.list({ search: 'kor/11' }))).toEqual([9005]);
    expect(ids(await sdk.invoices.list({ customer_name: 'ŁÓDŹ' }))).toEqual([9002]);
    expect(ids(await sdk.invoices.list({ customer_country: 'RO' }))).toEqual([9007]);
  });

  it('when a value is invalid, then the ApiError is a 422 with the errors map', async () => {
    const error = await apiErrorOf(sdk.invoices.list({ per_page: 501, date_from: '2026-02-30' }));
    expect(error).toMatchObject({ status: 422, message: 'The given data was invalid.', data: null });
    expect(error.errors).toEqual({
      per_page: ['The per_page field must not be greater than 500.'],
      date_from: ['The date_from field must be a valid date in the format YYYY-MM-DD.'],
    });
  });

  it('when the whole answer is wanted, then the raw client gives the envelope and headers with the same credentials', async () => {
    const { data, response } = await sdk.raw.GET('/invoices', { params: { query: { statuses: ['overdue'] } } });
    expect(data).toMatchObject({ status: 200, message: 'OK', data: { pagination: { total: 1 } } });
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^W\//);
    const again = await sdk.raw.GET('/invoices', { params: { query: { statuses: ['overdue'] }, header: { 'If-None-Match': etag } } });
    expect(again.response.status).toBe(304);
  });
});

describe('the SDK looks orders up', () => {
  it('when a number or a fragment is given, then the best matching order comes back', async () => {
    expect(await sdk.orders.findByNr('0412')).toEqual({ id: 3001, nr: 'BH/2026/0412', ownnr: 'PO-55-1' });
    expect(await sdk.orders.findByNr(' BH/2026/0412-b ')).toEqual({ id: 3002, nr: 'bh/2026/0412-B', ownnr: 'PO-55-2' });
  });

  it('when nothing matches or the nr is empty, then 404 and 422 ApiErrors say so', async () => {
    expect(await apiErrorOf(sdk.orders.findByNr('NO-SUCH'))).toMatchObject({ status: 404, message: 'Order with given nr (NO-SUCH) not found', errors: {} });
    const empty = await apiErrorOf(sdk.orders.findByNr('  '));
    expect(empty).toMatchObject({ status: 422, message: 'The nr field is required.', errors: { nr: ['The nr field is required.'] } });
  });

  it('when the categories are asked, then every shared category comes back', async () => {
    expect(await sdk.orders.fileCategories()).toEqual([
      { id: 1, name: 'CMR', visible_customer: 1 },
      { id: 2, name: 'Delivery note', visible_customer: 1 },
      { id: 3, name: 'Internal', visible_customer: 0 },
    ]);
  });
});

describe('the SDK uploads files', () => {
  it('when files come from a path, a buffer and a stream and one cannot be stored, then the others are stored and it is listed as failed', async () => {
    const onDisk = path.join(files, 'cmr.pdf');
    await writeFile(onDisk, Buffer.concat([PDF_BYTES, Buffer.from(`sdk path ${randomUUID()}`)]));
    const before = await fileRows();
    const result = await sdk.orders.uploadFiles(
      3001,
      [onDisk, { name: 'photo.png', content: PNG_BYTES }, { name: 'note.txt', content: Readable.from([Buffer.from('delivered '), Buffer.from(randomUUID())]) }],
      { categoryId: 2 },
    );
    expect(result).toEqual({
      message: '2 of 3 files uploaded',
      order_id: 3001,
      uploaded: [
        { id: expect.any(Number), name: 'cmr.pdf', category_id: 2 },
        { id: expect.any(Number), name: 'note.txt', category_id: 2 },
      ],
      failed: [{ name: 'photo.png', error: REFUSED_MESSAGE }],
    });
    expect(await fileRows()).toBe(before + 2);
  });

  it('when an upload is sent again with its idempotency key, then the first answer comes back and nothing is stored again', async () => {
    const content = new TextEncoder().encode(`%PDF-1.4 proof of delivery ${randomUUID()}`);
    const idempotencyKey = `sdk-${randomUUID()}`;
    const first = await sdk.orders.uploadFiles(3002, [{ name: 'pod.pdf', content }], { idempotencyKey });
    const rows = await fileRows();
    const again = await sdk.orders.uploadFiles(3002, [{ name: 'pod.pdf', content: new Blob([content]).stream() }], { idempotencyKey });
    expect(again).toEqual(first);
    expect(again.uploaded[0]).not.toHaveProperty('duplicate_of');
    expect(await fileRows()).toBe(rows);
    const reused = await apiErrorOf(sdk.orders.uploadFiles(3002, [{ name: 'other.pdf', content }], { idempotencyKey }));
    expect(reused.status).toBe(422);
    expect(Object.keys(reused.errors)).toEqual(['Idempotency-Key']);
  });

  it('when no file can be stored, the category is unknown or the order missing, then 422 (with the payload), 422 and 404 ApiErrors', async () => {
    const none = await apiErrorOf(sdk.orders.uploadFiles(3001, [{ name: 'photo.png', content: PNG_BYTES }]));
    expect(none).toMatchObject({ status: 422, message: 'No files were uploaded' });
    expect(none.data).toEqual({ message: 'No files were uploaded', order_id: 3001, uploaded: [], failed: [{ name: 'photo.png', error: REFUSED_MESSAGE }] });
    const category = await apiErrorOf(sdk.orders.uploadFiles(3001, [{ name: 'a.pdf', content: PDF_BYTES }], { categoryId: 999 }));
    expect(category).toMatchObject({ status: 422, errors: { category_id: ['The selected category_id is invalid.'] } });
    expect(await apiErrorOf(sdk.orders.uploadFiles(999_999, [{ name: 'a.pdf', content: PDF_BYTES }]))).toMatchObject({
      status: 404,
      message: 'Order not found',
    });
  });
});

describe('the SDK downloads PDFs', () => {
  it("when German with duplicate and Romanian are asked, then each comes as bytes with the server's file name, in its language", async () => {
    const german = await sdk.invoices.downloadPdf(9001, { lang: 'de', duplicate: true });
    expect(new URL(sdk.urls.at(-1)!).search).toBe('?lang=de&duplicate=true');
    expect(german).toMatchObject({ fileName: 'FV_11_2026_0007.pdf', contentType: 'application/pdf', etag: expect.stringMatching(/^"/) });
    expect(Buffer.from(german.bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    const germanText = await pdfText(Buffer.from(german.bytes));
    expect(germanText).toContain('Rechnungsnummer');
    expect(germanText).toContain('DUPLIKAT');
    const romanian = await sdk.invoices.downloadPdf(9007, { lang: 'ro' });
    expect(romanian.fileName).toBe('FV_09_2026_0050.pdf');
    const romanianText = await pdfText(Buffer.from(romanian.bytes));
    expect(romanianText).toContain('Număr factură: FV/09/2026/0050');
    expect(romanianText).not.toContain('DUPLICAT');
  });

  it("when the invoice is missing or another client's, then a 404 ApiError", async () => {
    for (const id of [424242, 9101]) {
      expect(await apiErrorOf(sdk.invoices.downloadPdf(id))).toMatchObject({ status: 404, message: 'Invoice not found', errors: {} });
    }
  });
});

describe('the SDK downloads e-invoices', () => {
  it("when UBL (the default), CII and a Factur-X PDF are asked, then each comes as bytes with the server's file name and type", async () => {
    const ubl = await sdk.invoices.downloadEInvoice(9001);
    expect(ubl).toMatchObject({ fileName: 'FV_11_2026_0007.xml', contentType: expect.stringContaining('application/xml'), etag: expect.stringMatching(/^"/) });
    const ublText = Buffer.from(ubl.bytes).toString('utf8');
    expect(ublText).toContain('urn:oasis:names:specification:ubl:schema:xsd:Invoice-2');
    expect(ublText).toContain('<cbc:ID>FV/11/2026/0007</cbc:ID>');
    const cii = await sdk.invoices.downloadEInvoice(9001, { format: 'cii', lang: 'de' });
    expect(new URL(sdk.urls.at(-1)!).search).toBe('?format=cii&lang=de');
    expect(Buffer.from(cii.bytes).toString('utf8')).toContain('CrossIndustryInvoice');
    const facturX = await sdk.invoices.downloadPdf(9001, { format: 'facturx' });
    expect(Buffer.from(facturX.bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    expect(await apiErrorOf(sdk.invoices.downloadEInvoice(424242))).toMatchObject({ status: 404, message: 'Invoice not found' });
  });
});

describe('the SDK with wrong credentials', () => {
  it('when the key is wrong, then every call is a 401 ApiError', async () => {
    const stranger = sdkFor(api, 'baltic', { token: 'not-a-key' });
    const calls = [
      stranger.invoices.list(),
      stranger.invoices.downloadPdf(9001),
      stranger.orders.findByNr('0412'),
      stranger.orders.fileCategories(),
      stranger.orders.uploadFiles(3001, [{ name: 'a.pdf', content: PDF_BYTES }]),
    ];
    // Every promise gets its handler at once: awaiting them one by one left a later rejection unhandled for a moment.
    const errors = await Promise.all(calls.map(apiErrorOf));
    expect(errors).toHaveLength(5);
    for (const error of errors) expect(error).toMatchObject({ status: 401, message: 'Authentication failed', errors: {}, requestId: expect.any(String) });
  });
});

describe('the example program', () => {
  // Compiled with tsc --strict in sdk-examples.test.ts.
  it('when run against the server, then it lists, saves a PDF and uploads', async () => {
    const out = await mkdtemp(path.join(files, 'example-'));
    const env = { ...process.env, LOGI_BASE_URL: api.base, LOGI_API_KEY: KEYS.baltic, LOGI_CLIENT_DIRECTORY: DIRS.baltic, LOGI_OUT_DIR: out };
    const { stdout } = await run(process.execPath, ['--import', 'tsx', EXAMPLE, 'BH/2026/0412'], { env });
    expect(stdout.split('\n')).toEqual([
      '3 overdue or paid invoices',
      'FV/09/2026/0050\tpaid\t7500 RON',
      'FV/10/2026/0100\toverdue\t999.99 EUR',
      'FV/11/2026/0008\tpaid\t300 PLN',
      expect.stringMatching(/^saved FV_09_2026_0050\.pdf \(\d+ bytes\)$/),
      'order BH/2026/0412: Files uploaded',
      '',
    ]);
    expect(await readdir(out)).toEqual(['FV_09_2026_0050.pdf']);
    expect((await readFile(path.join(out, 'FV_09_2026_0050.pdf'))).subarray(0, 5).toString()).toBe('%PDF-');
  });
});
