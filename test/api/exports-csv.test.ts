import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { parseCsv } from '../support/csv.js';
import { readZip } from '../support/zip-reader.js';

/**
 * `invoices.csv` opened in a spreadsheet runs nothing (contract, "Exports"; OWASP "CSV injection"): a customer name
 * written by another system straight into the table, starting like a formula, comes out with a leading `'`; the
 * manifest and the list keep the name as it is; amounts stay numbers.
 */
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({}, { label: 'exports-csv' });
});

afterAll(async () => {
  await api?.stop();
});

const HOSTILE = ['=HYPERLINK("http://evil.test","Open")', '+48 22 1234', '-2+3', '@SUM(A1:A9)', '\tTabbed', '\rReturned'];
/** Names in other scripts, written as they are (UTF-8). */
const SCRIPTS = ['SIA Kuļļi İĞŞıöç Ελληνική Α.Ε.', 'ООО «Ромашка», "Москва" Cafe\u0301', 'Emoji 🚚 👨‍👩‍👧 הובלות ישראל شركة النقل'];

describe(`invoices.csv and formulas (${PROFILE})`, () => {
  it('when customer names start with =, +, -, @, tab or CR, then the CSV cells start with a quote mark, names in other scripts are written as they are, and the list and manifest keep them', async () => {
    const before = (await envelopeOf(await api.call('/invoices?per_page=500'))).data.invoices as Array<{ id: number }>;
    const targets = before.slice(0, HOSTILE.length).map((invoice) => invoice.id);
    expect(targets).toHaveLength(HOSTILE.length);
    for (const [index, id] of targets.entries()) await api.knex('invoices').where({ id }).update({ customer_name: HOSTILE[index] });
    const scripted = before.slice(HOSTILE.length, HOSTILE.length + SCRIPTS.length).map((invoice) => invoice.id);
    expect(scripted).toHaveLength(SCRIPTS.length);
    for (const [index, id] of scripted.entries()) await api.knex('invoices').where({ id }).update({ customer_name: SCRIPTS[index] });

    const created = await envelopeOf(
      await api.call('/exports', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ documents: ['ubl'] }) }),
    );
    expect(created.status).toBe(202);
    const exportId = created.data.id as number;
    await expect
      .poll(async () => (await envelopeOf(await api.call(`/exports/${exportId}`))).data.status as string, { timeout: 120_000, interval: 100 })
      .toBe('succeeded');
    const members = await readZip(Buffer.from(await (await api.call(`/exports/${exportId}/download`)).arrayBuffer()));

    const [header, ...rows] = parseCsv(members.get('invoices.csv')!.toString('utf8'));
    const cell = (row: string[], name: string) => row[header!.indexOf(name)]!;
    const byId = new Map(rows.map((row) => [Number(cell(row, 'id')), row]));
    expect(targets.map((id) => cell(byId.get(id)!, 'customer_name'))).toEqual(HOSTILE.map((name) => `'${name}`));
    // Every script as it is, UTF-8, quoted where RFC 4180 asks.
    expect(scripted.map((id) => cell(byId.get(id)!, 'customer_name'))).toEqual(SCRIPTS);

    const list = (await envelopeOf(await api.call('/invoices?per_page=500'))).data.invoices as Array<Record<string, unknown>>;
    for (const item of list) {
      const row = byId.get(item.id as number)!;
      // Amounts are numbers in the list and written as they are: what a spreadsheet reads equals the list's value.
      for (const field of ['amount_net', 'amount_tax', 'amount_gross', 'paid', 'left_to_pay']) expect(Number(cell(row, field))).toBe(item[field]);
    }
    expect(targets.map((id) => list.find((item) => item.id === id)!.customer_name)).toEqual(HOSTILE);
    const manifest = JSON.parse(members.get('manifest.json')!.toString('utf8')) as { invoices: Array<{ id: number }> };
    expect(manifest.invoices.map((invoice) => invoice.id).sort((a, b) => a - b)).toEqual([...byId.keys()].sort((a, b) => a - b));
  });
});
