// packages/client/examples/readme-example.ts (compiled by the tests)
import { writeFile } from 'node:fs/promises';
import { createClient } from '@logi/client';

const api = createClient({ baseUrl: 'http://127.0.0.1:3000/v1', token: 'demo-key-baltic', clientDirectory: 'baltic-haulage' });
const { invoices, pagination } = await api.invoices.list({ statuses: ['overdue', 'paid'], sort_by: 'amount_gross', per_page: 50 });
const pdf = await api.invoices.downloadPdf(invoices[0]!.id, { lang: 'de', duplicate: true }); // bytes + 'FV_11_2026_0007.pdf'
await writeFile(pdf.fileName, pdf.bytes);
const order = await api.orders.findByNr('BH/2026/0412');
const upload = await api.orders.uploadFiles(order.id, ['./cmr.pdf', { name: 'note.txt', content: Buffer.from('ok') }], {
  categoryId: 1,
  idempotencyKey: crypto.randomUUID(),
});
console.log(pagination.total, upload.message, upload.failed); // failed: files that could not be stored
