import { describe, expect, it } from 'vitest';
import { InvalidJobPayloadError, parseJobPayload, type JobPayloads } from '@logi/domain';

const ID = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';

const store = (overrides: Record<string, unknown> = {}): JobPayloads['store-order-file'] => ({
  directory: 'baltic-haulage',
  orderId: 3001,
  categoryId: null,
  name: 'Łódź dowód.pdf',
  size: 1234,
  contentType: 'application/pdf',
  sha256: 'ab'.repeat(32),
  storageKey: `orders/baltic-haulage/3001/${ID}`,
  requestId: 'req-1',
  deadline: 1_764_300_000_000,
  ...overrides,
});

const render = (overrides: Record<string, unknown> = {}): JobPayloads['render-invoice-pdf'] => ({
  directory: 'baltic-haulage',
  invoiceId: 1001,
  lang: 'pl',
  duplicate: false,
  pdfKey: `pdf/${ID}.pdf`,
  requestId: 'req-1',
  deadline: 1_764_300_000_000,
  ...overrides,
});

function issuesOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidJobPayloadError) return error.issues;
    throw error;
  }
  throw new Error('the payload was accepted');
}

describe('parseJobPayload', () => {
  it.each([
    ['a store job', () => store()],
    ['a store job of an API before ADR 0046 (staging key)', () => store({ stagingKey: `staging/${ID}`, categoryId: 2 })],
    ['a plain render', () => render()],
    ['a cached Factur-X render', () => render({ format: 'facturx', cache: true, duplicate: true })],
  ])('when the payload is %s as the API sends it, then it passes unchanged', (_what, make) => {
    const payload = make();
    const name = 'storageKey' in payload ? 'store-order-file' : 'render-invoice-pdf';
    expect(parseJobPayload(name, payload)).toEqual(payload);
  });

  it.each([
    ['another directory', `orders/alpine-logistics/3001/${ID}`],
    ['another order', `orders/baltic-haulage/3002/${ID}`],
    ['an order id that only starts the same', `orders/baltic-haulage/30011/${ID}`],
    ['a climb with ..', `orders/baltic-haulage/3001/../../alpine-logistics/4001/${ID}`],
    ['encoded separators', `orders/baltic-haulage/3001/..%2F..%2Falpine-logistics%2F4001%2F${ID}`],
    ['a backslash', `orders/baltic-haulage/3001/..\\${ID}`],
    ['a segment more', `orders/baltic-haulage/3001/${ID}/x`],
    ['a leading slash', `/orders/baltic-haulage/3001/${ID}`],
    ['no file id', 'orders/baltic-haulage/3001/'],
    ['a file id that is no uuid', 'orders/baltic-haulage/3001/secret.pdf'],
  ])('when the storage key has %s, then the job is refused on storageKey', (_what, storageKey) => {
    expect(issuesOf(() => parseJobPayload('store-order-file', store({ storageKey })))).toEqual([expect.stringMatching(/^storageKey: /)]);
  });

  it.each([
    ['a path', 'baltic-haulage/../alpine-logistics'],
    ['..', '..'],
    ['an encoded slash', 'baltic%2Fx'],
    ['nothing', ''],
  ])('when the directory is %s, then the job is refused on directory', (_what, directory) => {
    expect(issuesOf(() => parseJobPayload('store-order-file', store({ directory, storageKey: `orders/${directory}/3001/${ID}` })))).toContainEqual(
      expect.stringMatching(/^directory: /),
    );
  });

  it.each([
    ['a staging key elsewhere', 'store-order-file', () => store({ stagingKey: `orders/alpine-logistics/4001/${ID}` }), 'stagingKey'],
    ['a PDF key outside pdf/', 'render-invoice-pdf', () => render({ pdfKey: `orders/alpine-logistics/4001/${ID}` }), 'pdfKey'],
    ['an id as text', 'store-order-file', () => store({ orderId: '3001' }), 'orderId'],
    ['a size past the upload limit', 'store-order-file', () => store({ size: 10 * 1024 * 1024 + 1 }), 'size'],
    ['an unknown language', 'render-invoice-pdf', () => render({ lang: 'xx' }), 'lang'],
    ['a field the API never sends', 'render-invoice-pdf', () => render({ bucket: 'other' }), '(payload)'],
  ] as const)('when a job carries %s, then it is refused naming the field, never its value', (_what, name, make, field) => {
    const issues = issuesOf(() => parseJobPayload(name, make()));
    expect(issues.some((issue) => issue.startsWith(`${field}: `))).toBe(true);
    expect(issues.join(' ')).not.toContain('alpine-logistics');
  });

  it('when there is no payload at all, then the job is refused', () => {
    expect(issuesOf(() => parseJobPayload('store-order-file', null))).toHaveLength(1);
  });
});
