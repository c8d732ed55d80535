/** What the soak's mixed load asks for, shared by the soak (soak.ts) and the API memory run (api-memory.ts). */

/** The list queries the mix cycles through: pages, filters, search, sorts and a period. */
export const LIST_QUERIES = [
  '',
  '?per_page=50&page=2',
  '?statuses=overdue,paid',
  '?search=2026',
  '?customer_name=cargo',
  '?sort_by=amount_gross&sort_dir=asc',
  '?period=last_90_days',
  '?types=s,c&sort_by=nr',
];

/** The head of every uploaded file: a PDF the sniffer recognises. */
export const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
