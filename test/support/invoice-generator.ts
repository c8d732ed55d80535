/**
 * A fixture file with `count` invoices, nine in ten of them in `directory` and
 * the rest in another tenant, spread over 2026 with varied amounts, statuses
 * and customers: data for benchmarks and query-plan checks.
 */
export function generatedInvoices(count: number, directory: string) {
  const statuses = ['issued', 'paid', 'semipaid', 'overdue'] as const;
  const types = ['s', 's', 's', 'c', 'p'] as const;
  const base = Date.UTC(2026, 0, 1) / 1000;
  return {
    clients: [
      { directory, api_key: 'bench-key-1', company: { name: 'B', address: 'A', vat: 'V', bank_account: 'X', bank_name: 'Y' } },
      { directory: 'other-tenant', api_key: 'bench-key-2', company: { name: 'B', address: 'A', vat: 'V', bank_account: 'X', bank_name: 'Y' } },
    ],
    file_categories: [],
    orders: [],
    invoices: Array.from({ length: count }, (_, i) => {
      const gross = ((i * 7919) % 100_000) / 10;
      const issue = base + ((i * 104729) % (320 * 86400));
      return {
        id: i + 1,
        directory: i % 10 === 0 ? 'other-tenant' : directory,
        nr: `FV/${(i % 12) + 1}/2026/${String(i).padStart(6, '0')}`,
        type: types[i % types.length],
        status: statuses[i % statuses.length],
        branch_id: (i % 5) + 1,
        issue_date: issue,
        service_date: issue - 86400,
        payment_term: issue + 14 * 86400,
        payment_date: i % 4 === 1 ? issue + 5 * 86400 : null,
        customer_name: `Customer ${(i * 31) % 997} Logistics`,
        customer_vat: `PL${String((i * 31) % 997).padStart(10, '0')}`,
        customer_country: 'pl',
        customer_address: 'Street 1',
        currency: 'EUR',
        amount_net: gross,
        amount_tax: 0,
        amount_gross: gross,
        paid: 0,
        left_to_pay: gross,
        correct_of: null,
        added_time: issue + 3600,
        orders: [{ type: 'FTL', nr: `ORD/${i}`, cmr: `CMR ${i}`, tasks: [], files: [], contacts: [] }],
        items: [
          { name: `Freight leg ${i}`, quantity: 1, unit: 'pcs', unit_price_net: gross, tax_rate: '23', amount_net: gross, amount_tax: 0, amount_gross: gross },
        ],
      };
    }),
  };
}
