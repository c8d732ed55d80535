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
