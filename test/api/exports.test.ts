import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportSchema } from '../../packages/api/src/ops/openapi/export.schemas.js';
import { envelopeOf, PROFILE, startTestApi, type Tenant, type TestApi } from '../support/api-harness.js';
import { readZip } from '../support/zip-reader.js';
import { heldExportRow } from '../support/export-rows.js';

/**
 * Exports over HTTP on the profile under test: validation and limits, the archive (manifest, CSV, documents byte for
 * byte what the single-invoice endpoints answer), download with ranges, cancel, expiry, and the export events.
 */
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ EVENTS_PUBLISH_INTERVAL_MS: '50', EXPORT_MAX_ACTIVE: '2' }, { label: 'exports' });
});

afterAll(async () => {
  await api?.stop();
});

type ExportDto = ReturnType<typeof exportSchema.parse>;

async function create(body: unknown, as: Tenant = 'baltic') {
  const response = await api.call('/exports', {
    method: 'POST',
    as,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { response, body: await envelopeOf(response) };
}

async function read(id: number, as: Tenant = 'baltic'): Promise<ExportDto> {
  const body = await envelopeOf(await api.call(`/exports/${id}`, { as }));
  return exportSchema.parse(body.data);
}

async function finished(id: number): Promise<ExportDto> {
  let current = await read(id);
  await expect
    .poll(
      async () => {
        current = await read(id);
        return current.status;
      },
      { timeout: 120_000, interval: 200 },
    )
    .toMatch(/^(succeeded|failed)$/);
  return current;
}

async function download(id: number, headers: Record<string, string> = {}) {
  const response = await api.call(`/exports/${id}/download`, { headers });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function feedEnd(): Promise<number> {
  let cursor = 0;
  for (;;) {
    const body = await envelopeOf(await api.call(`/events?after=${cursor}&limit=500`));
    if (body.data.events.length === 0) return cursor;
    cursor = body.data.next_after;
  }
}

async function listIds(query: string): Promise<Array<{ id: number; nr: string }>> {
  const body = await envelopeOf(await api.call(`/invoices?per_page=500${query}`));
  return body.data.invoices as Array<{ id: number; nr: string }>;
}

describe(`POST /v1/exports (${PROFILE})`, () => {
  it('when a member is invalid, then 422 names it, with filters named filters.<param>', async () => {
    const cases: Array<[unknown, string]> = [
      [{ filters: { period: 'yesterday' } }, 'filters.period'],
      [{ filters: { page: '2' } }, 'filters.page'],
      [{ filters: { sort_by: 'nr' } }, 'filters.sort_by'],
      [{ filters: { types: 's,x' } }, 'filters.types'],
      [{ filters: { date_from: '2026-02-30', period: 'custom' } }, 'filters.date_from'],
      [{ filters: { statuses: 5 } }, 'filters.statuses'],
      [{ filters: 'period=cur_month' }, 'filters'],
      [{ documents: [] }, 'documents'],
      [{ documents: ['pdf', 'docx'] }, 'documents'],
      [{ lang: 'fr' }, 'lang'],
      [{ duplicate: 'maybe' }, 'duplicate'],
      [{ csv: 'yes' }, 'csv'],
      [[1, 2], 'body'],
    ];
    for (const [body, field] of cases) {
      const answer = await create(body);
      expect(answer.response.status, JSON.stringify(body)).toBe(422);
      expect(answer.body.message).toBe('The given data was invalid.');
      expect(Object.keys(answer.body.errors ?? {}), JSON.stringify(body)).toEqual([field]);
    }
    expect((await api.call('/exports')).status).toBe(200);
  });

  it('when the body is not JSON, then 415, as on the webhook endpoints', async () => {
    const response = await api.call('/exports', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'x' });
    expect(response.status).toBe(415);
  });
});

describe(`an export's archive (${PROFILE})`, () => {
  it('when it succeeds, then the archive holds the manifest, the CSV and each PDF byte for byte as the PDF endpoint answers it, and matches its sha256', async () => {
    const cursorBefore = await feedEnd();
    const { response, body } = await create({ filters: { types: 's,c' }, lang: 'de', duplicate: true });
    expect(response.status).toBe(202);
    const queued = exportSchema.parse(body.data);
    expect(response.headers.get('location')).toBe(`/v1/exports/${queued.id}`);
    expect(queued).toMatchObject({
      status: 'queued',
      filters: { types: 's,c' },
      documents: ['pdf'],
      lang: 'de',
      duplicate: true,
      csv: true,
      size: null,
      sha256: null,
    });
    expect(queued.events_cursor).toBeGreaterThanOrEqual(cursorBefore);
    expect(queued.events_cursor).toBeLessThanOrEqual(await feedEnd());

    const done = await finished(queued.id);
    expect(done.status, done.error ?? '').toBe('succeeded');
    const expected = await listIds('&types=s,c');
    expect(done).toMatchObject({ total: expected.length, done: expected.length, error: null });
    expect(done.expires! - done.finished!).toBe(72 * 3600);

    const { response: got, bytes } = await download(queued.id);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/zip');
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="export-${queued.id}.zip"`);
    expect(got.headers.get('etag')).toBe(`"${done.sha256}"`);
    expect(bytes.length).toBe(done.size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(done.sha256);

    const members = await readZip(bytes);
    const manifest = JSON.parse(members.get('manifest.json')!.toString('utf8'));
    expect(manifest).toMatchObject({
      export_id: queued.id,
      created: queued.created,
      events_cursor: queued.events_cursor,
      filters: { types: 's,c' },
      documents: ['pdf'],
      lang: 'de',
      duplicate: true,
    });
    // The list's default order.
    expect(manifest.invoices.map((invoice: { id: number }) => invoice.id)).toEqual(expected.map((invoice) => invoice.id));
    const csv = members.get('invoices.csv')!.toString('utf8').split('\r\n');
    expect(csv[0]).toBe(
      'id,nr,type,status,branch_id,issue_date,service_date,payment_term,payment_date,customer_name,customer_vat,customer_country,currency,amount_net,amount_tax,amount_gross,paid,left_to_pay,correct_of,added_time',
    );
    expect(csv.slice(1, -1).map((line) => Number(line.split(',')[0]))).toEqual(expected.map((invoice) => invoice.id));
    expect(csv.at(-1)).toBe('');
    for (const invoice of manifest.invoices as Array<{ id: number; files: Array<{ path: string; size: number; sha256: string }> }>) {
      expect(invoice.files.map((file) => file.path)).toEqual([`pdf/${invoice.id}.pdf`]);
      const member = members.get(`pdf/${invoice.id}.pdf`)!;
      expect(member.length).toBe(invoice.files[0]!.size);
      expect(createHash('sha256').update(member).digest('hex')).toBe(invoice.files[0]!.sha256);
      const single = await api.call(`/invoices/${invoice.id}/pdf?lang=de&duplicate=true`);
      expect(single.status).toBe(200);
      expect(Buffer.from(await single.arrayBuffer()).equals(member)).toBe(true);
    }
    expect([...members.keys()].sort()).toEqual(['invoices.csv', 'manifest.json', ...expected.map((invoice) => `pdf/${invoice.id}.pdf`)].sort());

    // Ranges, and the ETag.
    const part = await download(queued.id, { Range: 'bytes=10-99' });
    expect(part.response.status).toBe(206);
    expect(part.response.headers.get('content-range')).toBe(`bytes 10-99/${done.size}`);
    expect(part.bytes.equals(bytes.subarray(10, 100))).toBe(true);
    expect((await download(queued.id, { Range: `bytes=${done.size}-` })).response.status).toBe(416);
    expect((await download(queued.id, { 'If-None-Match': `"${done.sha256}"` })).response.status).toBe(304);

    // The event, in the feed and its types filter.
    await expect
      .poll(
        async () => {
          const feed = await envelopeOf(await api.call(`/events?after=${queued.events_cursor}&types=export.succeeded&limit=500`));
          return (feed.data.events as Array<{ data: { object: { id: number } } }>).find((event) => event.data.object.id === queued.id)?.data.object;
        },
        { timeout: 10_000 },
      )
      .toEqual(done);
  });

  it('when XML documents are asked for, then each is what the e-invoice endpoint answers, byte for byte, and no CSV when csv is false', async () => {
    const { body } = await create({ filters: { search: 'BH' }, documents: ['cii', 'ubl', 'ubl'], csv: false });
    const done = await finished(body.data.id);
    expect(done.status, done.error ?? '').toBe('succeeded');
    expect(done.documents).toEqual(['ubl', 'cii']);
    const members = await readZip((await download(done.id)).bytes);
    expect(members.has('invoices.csv')).toBe(false);
    const expected = await listIds('&search=BH');
    expect(expected.length).toBeGreaterThan(0);
    for (const invoice of expected) {
      for (const format of ['ubl', 'cii']) {
        const single = Buffer.from(await (await api.call(`/invoices/${invoice.id}/e-invoice?format=${format}`)).arrayBuffer());
        expect(members.get(`${format}/${invoice.id}.xml`)!.equals(single)).toBe(true);
      }
    }
  });

  it('when more invoices match than EXPORT_MAX_INVOICES, or EXPORT_MAX_ACTIVE exports are queued or running, then 422 on filters, then 429 with Retry-After', async () => {
    const small = await startTestApi({ EXPORT_MAX_INVOICES: '1', EXPORT_MAX_ACTIVE: '1' }, { label: 'exports-limits' });
    try {
      const post = (body: unknown) => small.call('/exports', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const tooMany = await envelopeOf(await post({}));
      expect(tooMany.status).toBe(422);
      expect(Object.keys(tooMany.errors!)).toEqual(['filters']);
      const one = (await listIds(''))[0]!;
      // An export another runner holds (its lease far ahead) counts as running.
      const [held] = await small.knex('exports').insert(heldExportRow('baltic-haulage'));
      const refused = await post({ filters: { search: one.nr } });
      expect(await envelopeOf(refused)).toMatchObject({ status: 429, message: 'Too many exports in progress.' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Another directory has its own limit; and once the held export is gone, this one's POST is taken.
      expect(
        (
          await small.call('/exports', {
            method: 'POST',
            as: 'alpine',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ filters: { search: 'zzz-none' } }),
          })
        ).status,
      ).toBe(202);
      expect((await small.call(`/exports/${Number(held)}`, { method: 'DELETE' })).status).toBe(200);
      expect((await post({ filters: { search: one.nr } })).status).toBe(202);
    } finally {
      await small.stop();
    }
  });
});

describe(`export lifecycle (${PROFILE})`, () => {
  it('when it is not ready, expired, another directory’s or deleted, then 409, 410, 404 and 404', async () => {
    const { body } = await create({ filters: { search: 'BH' } });
    const id = body.data.id as number;
    expect((await api.call(`/exports/${id}`, { as: 'alpine' })).status).toBe(404);
    expect((await api.call(`/exports/${id}/download`, { as: 'alpine' })).status).toBe(404);
    const done = await finished(id);
    expect(done.status).toBe('succeeded');
    const list = await envelopeOf(await api.call('/exports'));
    expect((list.data as ExportDto[]).map((item) => item.id)).toContain(id);
    expect((list.data as ExportDto[]).map((item) => item.id)).toEqual([...(list.data as ExportDto[]).map((item) => item.id)].sort((a, b) => b - a));

    await api
      .knex('exports')
      .where({ id })
      .update({ expires: Math.floor(Date.now() / 1000) - 1 });
    expect(await envelopeOf(await api.call(`/exports/${id}/download`))).toMatchObject({ status: 410, message: 'Export has expired.' });

    await api
      .knex('exports')
      .where({ id })
      .update({ status: 'running', lease_until: Date.now() + 3_600_000 });
    expect(await envelopeOf(await api.call(`/exports/${id}/download`))).toMatchObject({ status: 409, message: 'Export is not ready.' });

    const deleted = await api.call(`/exports/${id}`, { method: 'DELETE' });
    expect(await envelopeOf(deleted)).toMatchObject({ status: 200, data: null });
    expect(await envelopeOf(await api.call(`/exports/${id}`))).toMatchObject({ status: 404, message: 'Export not found' });
    expect((await api.objectKeys()).filter((key) => key.startsWith(`exports/${id}-`))).toEqual([]);
  });

  it('when an export is deleted while it runs, then it stops and leaves no archive and no temporary file', async () => {
    const { body } = await create({ documents: ['pdf', 'facturx'] });
    const id = body.data.id as number;
    await expect.poll(async () => (await read(id)).status, { timeout: 60_000, interval: 50 }).not.toBe('queued');
    expect((await api.call(`/exports/${id}`, { method: 'DELETE' })).status).toBe(200);
    // The runner notices on its next renewal; then the process is idle again: a new export is made to the end.
    const next = await create({ filters: { search: 'BH' } });
    expect((await finished(next.body.data.id)).status).toBe('succeeded');
    expect((await api.objectKeys()).filter((key) => key.startsWith(`exports/${id}-`))).toEqual([]);
    const tmp = await readdir(path.join(api.dataDir, 'tmp')).catch(() => []);
    expect(tmp.filter((name) => name.startsWith('export-'))).toEqual([]);
  });
});
