/**
 * The limits the OpenAPI document states on what a client sends (issue 30,
 * Spectral's OWASP rules in .spectral.yaml): each is the one the server
 * enforces, read from the same constant or checked against the code that
 * makes the value. The property test (openapi-document.property.test.ts)
 * sends values up to and past them.
 */
import { describe, expect, it } from 'vitest';
import { StandardWebhooksSigner } from '@logi/adapters';
import { buildOpenApiDocument } from '@logi/api';
import { loadConfig } from '@logi/config';
import { listInvoicesQuerySchema, WEBHOOK_URL_MAX } from '@logi/domain';

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { headers?: Record<string, unknown> }>;
}

const doc = buildOpenApiDocument(loadConfig({})) as unknown as {
  servers: Schema[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
};
const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ at: `${method} ${path}`, op })));
const parameter = (method: string, path: string, name: string) => doc.paths[path]![method]!.parameters!.find((p) => p.name === name)!.schema;
const jsonBody = (method: string, path: string) =>
  doc.paths[path]![method]!.requestBody!.content['application/json']!.schema as { properties: Record<string, Schema> };

/** Every schema under a request value (parameters and bodies), with where it is. */
function requestSchemas(): Array<{ at: string; schema: Schema }> {
  const found: Array<{ at: string; schema: Schema }> = [];
  const walk = (at: string, value: unknown) => {
    if (value === null || typeof value !== 'object') return;
    if (!Array.isArray(value) && typeof (value as Schema).type === 'string') found.push({ at, schema: value as Schema });
    for (const [key, inner] of Object.entries(value)) walk(`${at}.${key}`, inner);
  };
  for (const { at, op } of operations) {
    for (const p of op.parameters ?? []) walk(`${at} ${p.name}`, p.schema);
    for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) walk(`${at} ${type}`, content.schema);
  }
  return found;
}

describe('the limits the OpenAPI document states on requests', () => {
  it('when an integer is sent, then its schema has both bounds and the format they fit (int32 or int64)', () => {
    const integers = requestSchemas().filter(({ schema }) => schema.type === 'integer');
    expect(integers.length).toBeGreaterThan(15);
    for (const { at, schema } of integers) {
      const [min, max] = [schema.minimum as number, schema.maximum as number];
      expect(Number.isSafeInteger(min) && Number.isSafeInteger(max), at).toBe(true);
      expect(schema.format, at).toBe(min >= -(2 ** 31) && max < 2 ** 31 ? 'int32' : 'int64');
    }
    expect(parameter('get', '/invoices', 'per_page')).toMatchObject({ format: 'int32', maximum: 500 });
    expect(parameter('get', '/invoices/{invoice_id}/pdf', 'invoice_id')).toMatchObject({ format: 'int64', maximum: 999_999_999_999_999 });
  });

  it('when a string or a list is sent, then it states its limit, or says which request limit bounds it', () => {
    for (const { at, schema } of requestSchemas()) {
      if (schema.type === 'string')
        expect(
          ['maxLength', 'enum', 'const', 'x-bounded-by'].some((key) => key in schema),
          at,
        ).toBe(true);
      if (schema.type === 'array') expect('maxItems' in schema || 'x-bounded-by' in schema, at).toBe(true);
    }
    expect(parameter('post', '/orders/{order_id}/files', 'Idempotency-Key')).toMatchObject({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' });
    expect(jsonBody('post', '/webhook-endpoints').properties.url).toMatchObject({ maxLength: WEBHOOK_URL_MAX });
    expect(jsonBody('patch', '/webhook-endpoints/{endpoint_id}').properties.url).toMatchObject({ maxLength: WEBHOOK_URL_MAX });
    expect(parameter('get', '/invoices', 'date_from')).toMatchObject({ format: 'date', maxLength: 10 });
    expect(parameter('get', '/invoices', 'customer_country')).toMatchObject({ minLength: 2, maxLength: 2 });
    // The server takes these at any size: only the request's own limits (414, 431, 413) bound them.
    for (const name of ['types', 'statuses', 'branch_ids', 'customer_vats']) {
      expect(parameter('get', '/invoices', name), name).toMatchObject({ 'x-bounded-by': expect.stringContaining('8 KiB') });
      expect(parameter('get', '/invoices', name)).not.toHaveProperty('maxItems');
    }
    expect(parameter('get', '/events', 'types')).toMatchObject({ 'x-bounded-by': expect.stringContaining('8 KiB') });
    expect(parameter('get', '/invoices', 'If-None-Match')).toMatchObject({ 'x-bounded-by': expect.stringContaining('64 KiB') });
    expect(jsonBody('post', '/webhook-endpoints').properties.event_types).toMatchObject({ 'x-bounded-by': expect.stringContaining('64 KiB') });
  });

  it('when the schemas are read by the server, then a date over 10 characters or a country not of 2 is refused with the usual message', () => {
    const errors = (query: Record<string, string>) => listInvoicesQuerySchema.safeParse(query).error?.issues.map((issue) => issue.message);
    expect(errors({ date_from: '2026-01-01T00:00:00Z' })).toEqual(['The date_from field must be a valid date in the format YYYY-MM-DD.']);
    expect(errors({ date_to: '2026-01-01' })).toBeUndefined();
    expect(errors({ customer_country: 'pol' })).toEqual(['The customer_country field must be two letters.']);
    expect(listInvoicesQuerySchema.parse({ customer_country: 'PL' }).customer_country).toBe('pl');
  });

  it('when a delivery is signed, then its webhook-* headers fit the webhooks section, with one secret and during a rotation', () => {
    const signer = new StandardWebhooksSigner();
    const headers = Object.fromEntries(doc.webhooks['invoice.created']!.post!.parameters!.map((p) => [p.name, p.schema]));
    const fits = (name: string, value: string) => {
      const schema = headers[name]!;
      return value.length <= (schema.maxLength as number) && new RegExp(schema.pattern as string).test(value);
    };
    const id = String(Number.MAX_SAFE_INTEGER);
    const at = Math.floor(Date.now() / 1000);
    expect(fits('webhook-id', id)).toBe(true);
    expect(fits('webhook-timestamp', String(at))).toBe(true);
    expect(fits('webhook-signature', signer.sign(id, at, '{"a":1}', [signer.newSecret()]))).toBe(true);
    expect(fits('webhook-signature', signer.sign(id, at, '{"a":1}', [signer.newSecret(), signer.newSecret()]))).toBe(true);
    expect(fits('webhook-signature', signer.sign(id, at, '{"a":1}', [signer.newSecret(), signer.newSecret(), signer.newSecret()]))).toBe(false);
  });

  it('when a response is counted against the rate limit, then it declares every rate-limit header; the server says who it is for', () => {
    const uncounted = new Set(['400', '405', '413', '414', '431']);
    for (const { at, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^[24]/.test(status) || uncounted.has(status) || '$ref' in response) continue;
        expect(Object.keys(response.headers ?? {}), `${at} ${status}`).toEqual(
          expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit']),
        );
      }
    }
    expect(doc.servers).toEqual([{ url: '/v1', description: expect.stringMatching(/production, staging, local/), 'x-internal': false }]);
  });
});
