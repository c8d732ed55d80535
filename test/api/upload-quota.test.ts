import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tokens } from '@logi/api';
import type { ClockPort } from '@logi/domain';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { DIRS } from '../support/test-fixture.js';

/**
 * UPLOAD_QUOTA_MB_PER_DAY over HTTP on the profile under test: 1 MiB a day,
 * days in Europe/Warsaw, the API's clock set by the test (the usage rows are
 * the database's, so they hold across processes).
 */
const KIB = 1024;
let api: TestApi;
let now = new Date('2026-03-14T12:00:00Z');

beforeAll(async () => {
  api = await startTestApi(
    { UPLOAD_QUOTA_MB_PER_DAY: '1', APP_TIMEZONE: 'Europe/Warsaw' },
    {
      label: 'quota',
      beforeStart: async (_dataDir, { container }) => {
        container.unbind(Tokens.Clock);
        container.bind(Tokens.Clock).toConstantValue({ now: () => now } satisfies ClockPort);
      },
    },
  );
});
afterAll(async () => {
  await api?.stop();
});

/** A PDF of exactly `kib` KiB, unlike any other. */
function pdfOf(kib: number): Buffer {
  const head = Buffer.concat([PDF_BYTES, Buffer.from(`% ${randomBytes(8).toString('hex')}\n`)]);
  return Buffer.concat([head, Buffer.alloc(kib * KIB - head.length, 0x20)]);
}

async function upload(orderId: number, files: Array<[string, Buffer]>, as: 'baltic' | 'alpine' = 'baltic') {
  const { body, contentType } = multipart(files.map(([filename, content]) => ({ name: 'files', filename, content, type: 'application/pdf' })));
  const response = await api.call(`/orders/${orderId}/files`, { method: 'POST', body, headers: { 'Content-Type': contentType }, as });
  return { status: response.status, body: await envelopeOf(response) };
}

async function storedNames(orderId: number): Promise<string[]> {
  const rows = (await api.knex('order_files').select('name').where({ order_id: orderId }).orderBy('id')) as Array<{ name: string }>;
  return rows.map((row) => row.name);
}

describe(`UPLOAD_QUOTA_MB_PER_DAY (${PROFILE})`, () => {
  it('when the second file of a request would pass the quota, then the first is stored and the second is in failed with the reason', async () => {
    const first = pdfOf(600);
    const { status, body } = await upload(3001, [
      ['first.pdf', first],
      ['second.pdf', pdfOf(600)],
    ]);
    expect(status).toBe(201);
    expect(body.message).toBe('1 of 2 files uploaded');
    expect(body.data.uploaded).toEqual([{ id: expect.any(Number), name: 'first.pdf', category_id: null }]);
    expect(body.data.failed).toEqual([{ name: 'second.pdf', error: 'Daily upload quota exceeded.' }]);
    expect(await storedNames(3001)).toEqual(['first.pdf']);

    // The same bytes again store nothing new, so they take nothing from the quota (424 KiB are left).
    const again = await upload(3001, [['first-again.pdf', first]]);
    expect(again.status).toBe(201);
    expect(again.body.data.uploaded).toEqual([
      { id: body.data.uploaded[0].id, name: 'first-again.pdf', category_id: null, duplicate_of: body.data.uploaded[0].id },
    ]);
  });

  it('when a later request of the same day would pass what is left, then nothing is stored and the answer is 422 No files were uploaded; what fits still goes in', async () => {
    const refused = await upload(3002, [['too-big.pdf', pdfOf(500)]]);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      status: 422,
      message: 'No files were uploaded',
      data: { message: 'No files were uploaded', order_id: 3002, uploaded: [], failed: [{ name: 'too-big.pdf', error: 'Daily upload quota exceeded.' }] },
    });
    expect(await storedNames(3002)).toEqual([]);

    const fits = await upload(3002, [['fits.pdf', pdfOf(424)]]);
    expect(fits.status).toBe(201);
    expect(fits.body.data.failed).toEqual([]);
    const full = await upload(3002, [['one-byte-more.pdf', Buffer.concat([PDF_BYTES, Buffer.from(randomBytes(4).toString('hex'))])]]);
    expect(full.status).toBe(422);
    expect(full.body.data.failed).toEqual([{ name: 'one-byte-more.pdf', error: 'Daily upload quota exceeded.' }]);
  });

  it('when another directory uploads, then its quota is its own', async () => {
    const other = await upload(4001, [['alpine.pdf', pdfOf(900)]], 'alpine');
    expect(other.status).toBe(201);
    expect(other.body.data.failed).toEqual([]);
  });

  it('when the day ends in APP_TIMEZONE (not yet in UTC), then the quota starts again', async () => {
    now = new Date('2026-03-14T22:59:59Z'); // 23:59:59 in Warsaw: still the full day
    expect((await upload(3003, [['late.pdf', pdfOf(100)]])).status).toBe(422);
    now = new Date('2026-03-14T23:00:00Z'); // midnight in Warsaw, the 14th in UTC
    const next = await upload(3003, [['next-day.pdf', pdfOf(1024)]]);
    expect(next.status).toBe(201);
    expect(next.body.data.uploaded.map((file: { name: string }) => file.name)).toEqual(['next-day.pdf']);
    const rows = (await api.knex('upload_quota_usage').select('day', 'bytes').where({ directory: DIRS.baltic }).orderBy('day')) as Array<{
      day: string;
      bytes: number | string;
    }>;
    expect(rows.map((row) => [row.day, Number(row.bytes)])).toEqual([
      ['2026-03-14', 1024 * KIB],
      ['2026-03-15', 1024 * KIB],
    ]);
  });
});
