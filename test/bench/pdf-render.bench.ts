import { buildInvoiceDocument, type InvoiceDetail } from '@logi/domain';
import { ChromiumPdfRenderer } from '@logi/adapters';
import { pathToFileURL } from 'node:url';
import { compare, type BenchResult } from './bench-kit.js';

/**
 * The PDF renderer keeps one warm browser with a page pool. Baseline: a new
 * browser for every document (what a naive renderer does).
 */
const invoice: InvoiceDetail = {
  id: 1,
  directory: 'bench',
  nr: 'FV/11/2026/0007',
  type: 's',
  status: 'issued',
  branchId: 1,
  issueDate: 1763510400,
  serviceDate: 1763424000,
  paymentTerm: 1764720000,
  paymentDate: null,
  customerName: 'Łódź Cargo Sp. z o.o.',
  customerVat: 'PL1234567890',
  customerCountry: 'pl',
  customerAddress: 'ul. Piotrkowska 1\n90-001 Łódź',
  currency: 'PLN',
  amountNet: 1000,
  amountTax: 230,
  amountGross: 1230,
  paid: 0,
  leftToPay: 1230,
  correctOf: null,
  addedTime: 1763512000,
  orders: [{ type: 'FTL', nr: 'BH/2026/0412', cmr: 'CMR 778120', tasks: [], files: [], contacts: [] }],
  items: Array.from({ length: 8 }, (_, i) => ({
    name: `Road freight leg ${i + 1}`,
    quantity: 1,
    unit: 'pcs',
    unitPriceNet: 125,
    taxRate: '23',
    amountNet: 125,
    amountTax: 28.75,
    amountGross: 153.75,
  })),
};
const seller = {
  name: 'Baltic Haulage Sp. z o.o.',
  address: 'ul. Portowa 4\n80-001 Gdańsk',
  vat: 'PL5860000000',
  bankAccount: 'PL61 1090 1014 0000 0712 1981 2874',
  bankName: 'Santander',
};
const document = buildInvoiceDocument(invoice, seller, 'pl', false, 'Europe/Warsaw');
const options = { chromiumPath: process.env.CHROMIUM_PATH ?? null, rendersPerBrowser: 10_000, renderTimeoutMs: 30_000 };

/** Runs the comparison; part `inprocess` of `pnpm bench`. */
export async function benchPdfRender(rounds = Number(process.env.BENCH_ROUNDS ?? 10)): Promise<BenchResult> {
  const warm = new ChromiumPdfRenderer(options);
  try {
    return await compare(
      'PDF render (one invoice)',
      {
        name: 'new browser per document',
        run: async () => {
          const cold = new ChromiumPdfRenderer(options);
          try {
            await cold.render(document);
          } finally {
            await cold.close();
          }
        },
      },
      { name: 'warm browser + page pool', run: () => warm.render(document) },
      rounds,
    );
  } finally {
    await warm.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await benchPdfRender();
