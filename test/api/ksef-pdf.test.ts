import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import jsQRModule from 'jsqr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { startTestApi, type TestApi } from '../support/api-harness.js';

/**
 * An invoice with a KSeF number prints the number under the verification QR code (KOD I, CIRFMF/ksef-docs
 * kody-qr.md): read back from the rendered PDF with pdftotext, and the code decoded (jsQR) from the page rasterised
 * by pdftoppm, its link naming the seller's NIP, the issue date and the SHA-256 of the very `format=ksef` document.
 */
const run = promisify(execFile);
// jsqr is CommonJS with `exports.default`: Node's ESM loader hands over the exports object, vitest the function.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as typeof jsQRModule.default;
const DIRECTORY = 'ksef-print';
const KEY = 'ksef-print-key-0123456789';
const KSEF_NUMBER = '5860000002-20261103-010000000001-2D';
const issueDate = Date.UTC(2026, 10, 3) / 1000;

function invoice(id: number, nr: string, extra: Record<string, unknown>) {
  return {
    id,
    directory: DIRECTORY,
    nr,
    type: 's',
    status: 'issued',
    branch_id: 1,
    issue_date: issueDate,
    service_date: issueDate - 86_400,
    payment_term: issueDate + 14 * 86_400,
    payment_date: null,
    customer_name: 'Łódź Cargo S.A.',
    customer_vat: 'PL7251234561',
    customer_country: 'pl',
    customer_address: 'ul. Włókiennicza 12\n90-001 Łódź\nPolska',
    currency: 'PLN',
    amount_net: 1000,
    amount_tax: 230,
    amount_gross: 1230,
    paid: 0,
    left_to_pay: 1230,
    correct_of: null,
    added_time: issueDate + 3600,
    orders: [],
    items: [
      {
        name: 'Road freight Gdańsk - Łódź',
        quantity: 1,
        unit: 'pcs',
        unit_price_net: 1000,
        tax_rate: '23',
        amount_net: 1000,
        amount_tax: 230,
        amount_gross: 1230,
      },
    ],
    ...extra,
  };
}

const fixture = {
  clients: [
    {
      directory: DIRECTORY,
      api_key: KEY,
      company: {
        name: 'Baltic Haulage Sp. z o.o.',
        address: 'ul. Portowa 4\n80-001 Gdańsk\nPolska',
        vat: 'PL5860000002',
        bank_account: 'PL61 1090 1014 0000 0712 1981 2874',
        bank_name: 'Santander Bank Polska',
      },
    },
  ],
  invoices: [
    invoice(880001, 'FV/KSEF/1', { ksef_number: KSEF_NUMBER }),
    invoice(880002, 'FV/KSEF/2', {}),
    // In euros without a rate: its FA(3) cannot be written, so the number is printed with no code to verify.
    invoice(880003, 'FV/KSEF/3', { ksef_number: '5860000002-20261103-010000000003-23', currency: 'EUR' }),
  ],
};

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi(
    {},
    { label: 'ksef-pdf', beforeStart: (_dataDir, { knex }) => loadFixtures(knex, fixture, { hasher: new Sha256ApiKeyHasher() }).then(() => undefined) },
  );
}, 120_000);
afterAll(async () => {
  await api?.stop();
});

const call = (pathAndQuery: string) => fetch(`${api.base}${pathAndQuery}`, { headers: { Authorization: `Bearer ${KEY}`, 'X-Client-Directory': DIRECTORY } });

async function savedPdf(id: number, lang: string): Promise<string> {
  const response = await call(`/invoices/${id}/pdf?lang=${lang}`);
  expect(response.status).toBe(200);
  const file = path.join(api.dataDir, `ksef-${id}-${lang}.pdf`);
  await writeFile(file, Buffer.from(await response.arrayBuffer()));
  return file;
}

/** The first page at 200 dpi as a binary PPM (P6), decoded by jsQR; null when the page holds no QR code. */
async function qrOnFirstPage(pdf: string): Promise<string | null> {
  const prefix = `${pdf}.page`;
  await run('pdftoppm', ['-r', '200', '-f', '1', '-l', '1', pdf, prefix]);
  const name = (await readdir(path.dirname(pdf))).find((file) => file.startsWith(path.basename(prefix)) && file.endsWith('.ppm'))!;
  const ppm = await readFile(path.join(path.dirname(pdf), name));
  const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.subarray(0, 64).toString('latin1'))!;
  const [width, height] = [Number(header[1]), Number(header[2])];
  const pixels = ppm.subarray(header[0].length);
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let index = 0; index < width * height; index++) {
    rgba[index * 4] = pixels[index * 3]!;
    rgba[index * 4 + 1] = pixels[index * 3 + 1]!;
    rgba[index * 4 + 2] = pixels[index * 3 + 2]!;
    rgba[index * 4 + 3] = 255;
  }
  return jsQR(rgba, width, height)?.data ?? null;
}

describe('the KSeF number and KOD I on the printed invoice', () => {
  it('when an invoice has a KSeF number, then the PDF prints it under a QR code that links to its verification with the SHA-256 of its FA(3)', async () => {
    const fa3 = await call('/invoices/880001/e-invoice?format=ksef');
    expect(fa3.status).toBe(200);
    const digest = createHash('sha256')
      .update(Buffer.from(await fa3.arrayBuffer()))
      .digest('base64url');
    const expected = `https://qr.ksef.mf.gov.pl/invoice/5860000002/03-11-2026/${digest}`;
    for (const lang of ['pl', 'en']) {
      const pdf = await savedPdf(880001, lang);
      expect((await run('pdftotext', ['-enc', 'UTF-8', pdf, '-'])).stdout.split('\n').map((line) => line.trim())).toContain(KSEF_NUMBER);
      // The same link in every language: FA(3) is the Polish document whatever the print's language.
      expect(await qrOnFirstPage(pdf)).toBe(expected);
    }
  });

  it('when an invoice has no KSeF number, then no number and no QR code are printed', async () => {
    const pdf = await savedPdf(880002, 'pl');
    expect((await run('pdftotext', ['-enc', 'UTF-8', pdf, '-'])).stdout).not.toMatch(/5860000002-\d{8}-/);
    expect(await qrOnFirstPage(pdf)).toBeNull();
  });

  it('when the FA(3) of an invoice with a KSeF number cannot be written, then the number is printed without a code, and format=ksef says what is missing', async () => {
    const pdf = await savedPdf(880003, 'pl');
    expect((await run('pdftotext', ['-enc', 'UTF-8', pdf, '-'])).stdout).toContain('5860000002-20261103-010000000003-23');
    expect(await qrOnFirstPage(pdf)).toBeNull();
    const refused = await call('/invoices/880003/e-invoice?format=ksef');
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { errors: { format: string[] } }).errors.format).toEqual([
      'format=ksef needs exchange_rate (PLN for one EUR: FA(3) states the VAT in PLN).',
    ]);
  });
});
