import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';

const run = promisify(execFile);
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.stop();
});

async function pdfText(response: Response): Promise<string> {
  const file = path.join(api.dataDir, `check-${Date.now()}-${Math.random()}.pdf`);
  await writeFile(file, Buffer.from(await response.arrayBuffer()));
  return (await run('pdftotext', ['-layout', file, '-'])).stdout;
}

/** pdftotext's text in reading order (no -layout): each party's lines one under another. */
async function pdfTextRaw(response: Response): Promise<string> {
  const file = path.join(api.dataDir, `check-${Date.now()}-${Math.random()}.pdf`);
  await writeFile(file, Buffer.from(await response.arrayBuffer()));
  return (await run('pdftotext', ['-enc', 'UTF-8', file, '-'])).stdout;
}

describe('GET /invoices/{id}/pdf', () => {
  it('when the invoice exists, then a PDF download named after the invoice number', async () => {
    const response = await api.call('/invoices/9001/pdf');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="FV_11_2026_0007.pdf"');
    const text = await pdfText(response);
    expect(text).toContain('FV/11/2026/0007');
    expect(text).toContain('Rheinfracht GmbH');
    expect(text).not.toMatch(/DUPLICATE/);
  });

  it('when Polish and duplicate are asked, then the document is Polish and marked as a duplicate', async () => {
    const response = await api.call('/invoices/9002/pdf?lang=pl&duplicate=true');
    expect(response.status).toBe(200);
    const text = await pdfText(response);
    expect(text).toContain('DUPLIKAT');
    expect(text).toContain('łódź Cargo S.A.');
    expect(text).toMatch(/Faktura/);
  });

  it('when a Turkish buyer is printed in Turkish, then its address (with ğ), its country once and the Turkish names of its VAT id and units', async () => {
    const response = await api.call('/invoices/9008/pdf?lang=tr');
    expect(response.status).toBe(200);
    const lines = (await pdfTextRaw(response))
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    expect(lines).toContain('Gamma İstanbul Lojistik');
    const buyerAt = lines.indexOf('Ertuğrul Gazi Cd. 7');
    expect(lines.slice(buyerAt, buyerAt + 3)).toEqual(['Ertuğrul Gazi Cd. 7', '16140 Nilüfer/Bursa', 'Türkiye']);
    expect(lines.filter((line) => line === 'Türkiye')).toHaveLength(1);
    // The seller's address ends in "Poland": printed once, in Turkish.
    const sellerAt = lines.indexOf('ul. Portowa 4');
    expect(lines.slice(sellerAt, sellerAt + 3)).toEqual(['ul. Portowa 4', '80-001 Gdańsk', 'Polonya']);
    expect(lines).not.toContain('Poland');
    expect(lines).toContain('VKN: TR1234567890');
    expect(lines).toContain('Vergi No: PL5860000000');
    // The item row as laid out: position, name, then quantity and unit one space apart.
    const row = (await pdfText(await api.call('/invoices/9008/pdf?lang=tr'))).split('\n').find((line) => /^\s*1 Road freight/.test(line));
    expect(/^\s*1 (\S+(?: \S+)*)\s{2,}(\S+) (\S+)\s{2,}/.exec(row ?? '')?.slice(1)).toEqual(['Road freight Gdansk - Duisburg, 13.6 ldm', '1', 'adet']);
  });

  it('when the invoice is missing, belongs to another client or the id is not an integer, then 404 even with an invalid query', async () => {
    for (const target of ['/invoices/424242/pdf', '/invoices/9101/pdf?lang=xx', '/invoices/abc/pdf', '/invoices/1.5/pdf', '/invoices/0/pdf']) {
      const response = await api.call(target);
      expect(response.status).toBe(404);
      expect(await envelopeOf(response)).toEqual({ status: 404, message: 'Invoice not found', data: null });
    }
  });

  it.each(['?lang=xx', '?lang=PL', '?lang=eng', '?duplicate=yes', '?duplicate=2', '?lang=pl&lang=de', '?lang[]=pl'])(
    'when the query is %s, then 422 The given data was invalid.',
    async (query) => {
      const response = await api.call(`/invoices/9001/pdf${query}`);
      expect(response.status).toBe(422);
      const body = await envelopeOf(response);
      expect(body.message).toBe('The given data was invalid.');
      expect(body.data).toBeNull();
    },
  );
});
