/**
 * Lists overdue and paid invoices, saves the first one as a German PDF and
 * uploads a note to an order. Run it against a server:
 *
 *   LOGI_BASE_URL=http://127.0.0.1:3000/v1 LOGI_API_KEY=... LOGI_CLIENT_DIRECTORY=... \
 *     pnpm exec tsx packages/client/examples/quick-start.ts <order nr>
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApiError, createClient } from '@logi/client';

const api = createClient({
  baseUrl: process.env.LOGI_BASE_URL ?? 'http://127.0.0.1:3000/v1',
  token: process.env.LOGI_API_KEY ?? '',
  clientDirectory: process.env.LOGI_CLIENT_DIRECTORY ?? '',
  retry: { attempts: 3, maxWaitSeconds: 30 },
});

try {
  const { invoices, pagination } = await api.invoices.list({ statuses: ['overdue', 'paid'], sort_by: 'amount_gross', sort_dir: 'desc' });
  console.log(`${pagination.total} overdue or paid invoices`);
  for (const invoice of invoices) console.log(`${invoice.nr}\t${invoice.status}\t${invoice.amount_gross} ${invoice.currency}`);

  const first = invoices[0];
  if (first) {
    const pdf = await api.invoices.downloadPdf(first.id, { lang: 'de' });
    await writeFile(path.join(process.env.LOGI_OUT_DIR ?? '.', pdf.fileName), pdf.bytes);
    console.log(`saved ${pdf.fileName} (${pdf.bytes.byteLength} bytes)`);
  }

  const order = await api.orders.findByNr(process.argv[2] ?? '');
  const upload = await api.orders.uploadFiles(order.id, [{ name: 'delivery-note.txt', content: Buffer.from('Delivered in full.\n') }], {
    idempotencyKey: crypto.randomUUID(),
  });
  console.log(`order ${order.nr}: ${upload.message}`);
} catch (error) {
  if (!(error instanceof ApiError)) throw error;
  console.error(`${error.status} ${error.message}`, error.errors);
  process.exitCode = 1;
}
