import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { buildOpenApiDocument, servedOpenApiDocument } from '@logi/api';
import {
  createWebhookEndpointSchema,
  eInvoiceQuerySchema,
  invoicePdfQuerySchema,
  listDeliveriesQuerySchema,
  listInvoicesQuerySchema,
  replayWebhookSchema,
  updateWebhookEndpointSchema,
} from '@logi/domain';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES, PNG_BYTES } from '../support/multipart.js';
import { OpenApiContract, type OpenApiDoc } from '../support/openapi-contract.js';
import { replaceDirectoryWithFile } from '../support/break-storage.js';
import { rawRequest } from '../support/raw-http.js';
import { authHeaders } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';

/** The answers every operation documents, whatever it does. */
const COMMON = ['400', '401', '403', '405', '414', '429', '431', '500', '503'];
/** And those of a JSON body (400, a body that does not parse, is common). */
const JSON_BODY = ['413', '415', '422'];
/** Every operation of the document, with the answers it documents besides the common ones. */
const OPERATIONS: ReadonlyArray<readonly [string, string, readonly string[]]> = [
  ['post', '/orders/{order_id}/files', ['201', '404', '409', '413', '422']],
  ['get', '/orders/file-categories', ['200']],
  ['get', '/orders/by-nr', ['200', '404', '422']],
  ['get', '/invoices', ['200', '304', '422']],
  ['get', '/invoices/{invoice_id}/pdf', ['200', '304', '404', '422']],
  // Beyond the spec's five: the contract's e-invoice addition.
  ['get', '/invoices/{invoice_id}/e-invoice', ['200', '304', '404', '422']],
  // And its events addition: the change feed and webhook endpoints.
  ['get', '/events', ['200', '410', '422']],
  ['get', '/webhook-endpoints', ['200']],
  // 409: an Idempotency-Key whose first request still runs, on every operation that creates something.
  ['post', '/webhook-endpoints', ['201', '409', ...JSON_BODY]],
  ['get', '/webhook-endpoints/{endpoint_id}', ['200', '404']],
  ['patch', '/webhook-endpoints/{endpoint_id}', ['200', '404', ...JSON_BODY]],
  ['delete', '/webhook-endpoints/{endpoint_id}', ['200', '404']],
  // No body is needed; one that is sent is read, and refused as any JSON body is.
  ['post', '/webhook-endpoints/{endpoint_id}/rotate-secret', ['200', '404', '413', '415']],
  ['get', '/webhook-endpoints/{endpoint_id}/deliveries', ['200', '404', '422']],
  ['post', '/webhook-endpoints/{endpoint_id}/replay', ['202', '404', '409', '410', ...JSON_BODY]],
  // And its files-out addition.
  ['get', '/orders/{order_id}/files', ['200', '404']],
  ['get', '/orders/{order_id}/files/{file_id}', ['200', '206', '304', '404', '416']],
  ['post', '/orders/{order_id}/files/{file_id}/link', ['201', '404', '409', ...JSON_BODY]],
  // And its exports addition.
  ['get', '/exports', ['200']],
  ['post', '/exports', ['202', '409', ...JSON_BODY]],
  ['get', '/exports/{export_id}', ['200', '404']],
  ['delete', '/exports/{export_id}', ['200', '404']],
  ['get', '/exports/{export_id}/download', ['200', '206', '304', '404', '409', '410', '416']],
];
/** Operations outside the credential gate: a file link's token is its credential (no 401; counted per IP). */
const PUBLIC_OPERATIONS: ReadonlyArray<readonly [string, string, readonly string[]]> = [
  ['get', '/file-links/{token}', ['200', '206', '304', '400', '403', '404', '405', '410', '414', '416', '429', '431', '500', '503']],
];
const WEBHOOK_ID_OPERATIONS = OPERATIONS.filter(([, path]) => path.startsWith('/webhook-endpoints/{endpoint_id}'));
/** The contract's event types, each a `webhooks` entry, with the schema of its event. */
const EVENT_SCHEMAS: Record<string, string> = {
  'invoice.created': 'InvoiceCreatedEvent',
  'invoice.updated': 'InvoiceUpdatedEvent',
  'invoice.deleted': 'InvoiceDeletedEvent',
  'order.file_attached': 'FileAttachedEvent',
  'export.succeeded': 'ExportSucceededEvent',
  'export.failed': 'ExportFailedEvent',
};
/** A request of each operation, for the answers any request can meet (no id needs to exist). */
const CALLS: Array<[string, string, string]> = OPERATIONS.map(([method, path]) => [
  path.replace('{order_id}', '3001').replace('{invoice_id}', '9001').replace('{endpoint_id}', '1').replace('{file_id}', '1').replace('{export_id}', '1') +
    (path === '/orders/by-nr' ? '?nr=1' : ''),
  method,
  path,
]);

let api: TestApi;
let contract: OpenApiContract;
beforeAll(async () => {
  api = await startTestApi();
  const response = await fetch(`${api.base}/openapi.json`);
  expect(response.status).toBe(200);
  contract = new OpenApiContract((await response.json()) as OpenApiDoc);
});
afterAll(async () => {
  await api?.stop();
});

describe('the OpenAPI document', () => {
  it('when fetched without credentials, then it is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(contract.doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(contract.doc.servers).toEqual([expect.objectContaining({ url: '/v1' })]);
  });

  it('when read, then it links the guides the API serves (/v1/guides/<name>, each a file under docs/integrate) from the front page, every tag and the operations, and names an operator page it does not serve', async () => {
    const text = JSON.stringify(contract.doc);
    const links = [...text.matchAll(/\]\(([^)]*)\)/g)].map((match) => match[1]!);
    const doc = contract.doc as unknown as { externalDocs: { url: string }; tags: Array<{ name: string; externalDocs?: { url: string } }> };
    const external = [doc.externalDocs.url, ...doc.tags.map((tag) => tag.externalDocs?.url ?? `(none on ${tag.name})`)];
    for (const url of new Set([...links, ...external])) {
      expect(url).toMatch(/^\/v1\/guides\/[a-z-]+$/);
      // The guides live beside the code: a renamed or missing guide fails here, not in a reader's browser.
      await expect(access(resolve(`docs/integrate/${url.slice('/v1/guides/'.length)}.md`)), url).resolves.toBeUndefined();
    }
    // A link text is its repository path, so it reads right where a link cannot be followed (the SDK's comments).
    expect(text).toContain('[docs/integrate/uploads.md](/v1/guides/uploads)');
    // An operator's page is not served here: named, not linked.
    expect(text).toContain('`docs/operate/observability.md`');
    const upload = contract.operation('post', '/orders/{order_id}/files');
    expect(upload.parameters?.find((p) => p.name === 'Idempotency-Key')).toMatchObject({ description: expect.stringContaining('(/v1/guides/uploads)') });
    const guideOf: Array<[string, string, string]> = [
      ['post', '/orders/{order_id}/files', 'uploads'],
      ['get', '/invoices/{invoice_id}/pdf', 'invoices-and-pdfs'],
      ['get', '/invoices/{invoice_id}/e-invoice', 'e-invoices'],
      ['get', '/events', 'events-and-webhooks'],
      ['post', '/webhook-endpoints', 'events-and-webhooks'],
    ];
    for (const [method, route, guide] of guideOf) {
      expect((contract.operation(method, route) as { description?: string }).description, `${method} ${route}`).toContain(`](/v1/guides/${guide})`);
    }
  });

  it('when the operator gives the address the repository is published at, then every guide link starts there and nothing else changes', async () => {
    const facts = { timeZone: api.config.timeZone, rateLimit: api.config.rateLimit, uploadMaxFiles: api.config.uploadMaxFiles };
    const base = 'https://git.example.com/logi/-/blob/v1.4.0';
    const published = JSON.stringify(buildOpenApiDocument({ ...facts, docsBaseUrl: base }));
    expect(published).toContain(`[docs/integrate/uploads.md](${base}/docs/integrate/uploads.md)`);
    expect(published).toContain(`[docs/operate/observability.md](${base}/docs/operate/observability.md)`);
    expect(JSON.parse(published).externalDocs.url).toBe(`${base}/docs/integrate/getting-started.md`);
    expect(published).not.toMatch(/\]\((docs|\/v1)\//);
    // A trailing slash on the base is the same address.
    expect(JSON.stringify(buildOpenApiDocument({ ...facts, docsBaseUrl: `${base}/` }))).toBe(published);
    const served = published
      .replaceAll(`[docs/operate/observability.md](${base}/docs/operate/observability.md)`, '`docs/operate/observability.md`')
      .replace(new RegExp(`${base.replace(/[.]/g, '\\.')}/docs/integrate/([a-z-]+)\\.md`, 'g'), '/v1/guides/$1');
    expect(served).toBe(JSON.stringify(buildOpenApiDocument(facts)));
    const result = await new Validator().validate(JSON.parse(published) as never);
    expect(result.errors ?? []).toEqual([]);
  });

  it('when pnpm openapi:lint builds the document, then it is byte for byte what GET /v1/openapi.json serves with the same configuration', async () => {
    // scripts/openapi-lint.ts lints servedOpenApiDocument(config): the served document, guide links and servers as served.
    expect(await (await fetch(`${api.base}/openapi.json`)).text()).toBe(JSON.stringify(servedOpenApiDocument(api.config)));
  });

  it('when the API runs with DOCS_BASE_URL, then the document it serves links the guides there', async () => {
    const base = 'https://git.example.com/logi/-/blob/v1.4.0';
    const published = await startTestApi({ DOCS_BASE_URL: base });
    try {
      const document = (await (await fetch(`${published.root}/v1/openapi.json`)).json()) as {
        externalDocs: { url: string };
        tags: Array<{ externalDocs?: { url: string } }>;
      };
      expect(document.externalDocs.url).toBe(`${base}/docs/integrate/getting-started.md`);
      for (const tag of document.tags) if (tag.externalDocs) expect(tag.externalDocs.url.startsWith(`${base}/docs/`)).toBe(true);
    } finally {
      await published.stop();
    }
  });

  it('when read, then it covers exactly the five endpoints of the spec and the e-invoice and events additions (feed and webhook endpoints), each with its error answers and exact messages', () => {
    const listed = Object.entries(contract.doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`));
    expect(listed.sort()).toEqual([...OPERATIONS, ...PUBLIC_OPERATIONS].map(([method, path]) => `${method} ${path}`).sort());
    for (const [method, path, own] of PUBLIC_OPERATIONS) {
      const operation = contract.operation(method, path);
      expect((operation as { security?: unknown }).security, `${method} ${path}`).toEqual([]);
      expect(Object.keys(operation.responses).sort(), `${method} ${path}`).toEqual([...own].sort());
    }
    for (const [method, path, own] of OPERATIONS) {
      const responses = contract.operation(method, path).responses;
      expect(Object.keys(responses).sort(), `${method} ${path}`).toEqual([...COMMON, ...own].sort());
      const message = (status: string) => JSON.stringify(responses[status]!.content!['application/json']!.schema);
      expect(message('401')).toContain('"const":"Authentication failed"');
      // The feed's 429 is also its long-poll cap; every other 429 is the rate limit alone.
      if (path === '/events') expect(message('429')).toContain('"enum":["Too Many Attempts.","Too many waiting requests."]');
      else if (path === '/exports' && method === 'post')
        expect(message('429')).toContain('"enum":["Too Many Attempts.","Too many exports in progress.","Export storage quota exceeded."]');
      else expect(message('429')).toContain('"const":"Too Many Attempts."');
      expect(message('503')).toContain('"const":"Service Unavailable"');
      expect(responses['429']!.headers).toHaveProperty('Retry-After');
      expect(responses['503']!.headers).toHaveProperty('Retry-After');
      expect(responses['405']!.headers).toHaveProperty('Allow');
      if (own.includes('415')) {
        expect(message('413'), `${method} ${path}`).toContain('"const":"Payload Too Large"');
        expect(responses['413']!.description).toContain('over 64 KiB');
        expect(message('415'), `${method} ${path}`).toContain('"const":"Unsupported Media Type"');
        // Its own 400 replaces the shared one and says both: JSON that does not parse, HTTP that is not well-formed.
        expect(message('400')).toContain('"const":"Bad Request"');
        expect(responses['400']!.description).toMatch(/not valid JSON.*not well-formed HTTP/s);
      }
    }
    const notFound = (method: string, path: string) => JSON.stringify(contract.operation(method, path).responses['404']!.content!['application/json']!.schema);
    expect(notFound('post', '/orders/{order_id}/files')).toContain('"const":"Order not found"');
    expect(notFound('get', '/orders/by-nr')).toContain('Order with given nr');
    expect(notFound('get', '/invoices/{invoice_id}/pdf')).toContain('"const":"Invoice not found"');
    for (const [method, path] of WEBHOOK_ID_OPERATIONS) expect(notFound(method, path), `${method} ${path}`).toContain('"const":"Webhook endpoint not found"');
    expect(JSON.stringify(contract.operation('get', '/invoices').responses['422'])).toContain('The given data was invalid.');
    const unprocessable = (method: string, path: string) =>
      JSON.stringify(contract.operation(method, path).responses['422']!.content!['application/json']!.schema);
    for (const [method, path] of [
      ['patch', '/webhook-endpoints/{endpoint_id}'],
      ['get', '/webhook-endpoints/{endpoint_id}/deliveries'],
      ['post', '/webhook-endpoints/{endpoint_id}/replay'],
    ] as const) {
      expect(unprocessable(method, path), `${method} ${path}`).toContain('"const":"The given data was invalid."');
    }
    // Creation is also refused at the directory's maximum of endpoints, with a message of its own.
    expect(unprocessable('post', '/webhook-endpoints')).toContain('"const":"The given data was invalid."');
    expect(unprocessable('post', '/webhook-endpoints')).toContain('A client directory may have at most');
    // A replay's 410: the cursor is past retention, or from before a restore (both messages, as the feed's).
    expect(JSON.stringify(contract.operation('post', '/webhook-endpoints/{endpoint_id}/replay').responses['410'])).toContain(
      '"enum":["Events after this cursor are no longer kept.","This cursor is from before a restore; resynchronise."]',
    );
    expect(JSON.stringify(contract.operation('post', '/webhook-endpoints/{endpoint_id}/replay').responses['409'])).toContain(
      '"const":"A replay of this endpoint is still running."',
    );
  });

  it("when read, then its webhooks section has exactly one POST per event type, whose body is that event's schema and whose parameters are the three Standard Webhooks headers", () => {
    const webhooks = contract.doc.webhooks as Record<
      string,
      Record<
        string,
        {
          parameters: Array<{ name: string; in: string; required: boolean }>;
          requestBody: { required: boolean; content: Record<string, { schema: { $ref?: string } }> };
        }
      >
    >;
    expect(Object.keys(webhooks).sort()).toEqual(Object.keys(EVENT_SCHEMAS).sort());
    const schemas = (contract.doc.components as { schemas: Record<string, { properties: { type: { const?: string } } }> }).schemas;
    for (const [type, item] of Object.entries(webhooks)) {
      expect(Object.keys(item), type).toEqual(['post']);
      const { parameters, requestBody } = item.post!;
      expect(requestBody.required, type).toBe(true);
      expect(Object.keys(requestBody.content), type).toEqual(['application/json']);
      expect(requestBody.content['application/json']!.schema, type).toEqual({ $ref: `#/components/schemas/${EVENT_SCHEMAS[type]}` });
      expect(schemas[EVENT_SCHEMAS[type]!]!.properties.type.const, type).toBe(type);
      expect(
        parameters.map((p) => [p.in, p.name, p.required]),
        type,
      ).toEqual([
        ['header', 'webhook-id', true],
        ['header', 'webhook-timestamp', true],
        ['header', 'webhook-signature', true],
      ]);
    }
  });

  it('when read, then every query parameter of the validating zod schemas is there with type, default, enum and description', () => {
    const params = (method: string, path: string) =>
      new Map((contract.operation(method, path).parameters ?? []).filter((p) => p.in !== 'header').map((p) => [p.name, p]));
    const list = params('get', '/invoices');
    // Besides the query: the conditional-request header.
    expect((contract.operation('get', '/invoices').parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name)).toEqual(['If-None-Match']);
    expect([...list.keys()].sort()).toEqual(Object.keys(listInvoicesQuerySchema.shape).sort());
    for (const parameter of list.values()) {
      expect(parameter.in).toBe('query');
      expect((parameter as { description?: string }).description).toBeTruthy();
      expect(parameter.schema.type).toBeDefined();
    }
    expect(list.get('per_page')!.schema).toEqual({ type: 'integer', format: 'int32', minimum: 1, maximum: 500, default: 250 });
    expect(list.get('page')!.schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(list.get('period')!.schema.enum).toEqual(['cur_month', 'prev_month', 'last_30_days', 'last_60_days', 'last_90_days', 'custom']);
    expect(list.get('sort_dir')!.schema).toMatchObject({ enum: ['asc', 'desc'], default: 'desc' });
    expect(list.get('types')).toMatchObject({ style: 'form', explode: false, schema: { type: 'array', items: { enum: ['s', 'c', 'p'] } } });
    const pdf = params('get', '/invoices/{invoice_id}/pdf');
    expect([...pdf.keys()].sort()).toEqual(['invoice_id', ...Object.keys(invoicePdfQuerySchema.shape)].sort());
    expect(pdf.get('lang')!.schema).toMatchObject({ enum: ['cs', 'de', 'en', 'pl', 'ro', 'tr'], default: 'en' });
    // Shaped for generated clients (numbers and a boolean), while the wire stays digits and true/false/1/0.
    expect(pdf.get('duplicate')).toMatchObject({
      schema: { type: 'boolean', default: false },
      description: expect.stringContaining('`1` and `0` are accepted too'),
    });
    const pathIds = [
      ['get', '/invoices/{invoice_id}/pdf', 'invoice_id'],
      ['get', '/invoices/{invoice_id}/e-invoice', 'invoice_id'],
      ['post', '/orders/{order_id}/files', 'order_id'],
      ...WEBHOOK_ID_OPERATIONS.map(([method, path]) => [method, path, 'endpoint_id'] as const),
    ] as const;
    for (const [method, path, name] of pathIds) {
      const id = params(method, path).get(name)!;
      expect(id, `${method} ${path}`).toMatchObject({ in: 'path', required: true, schema: { type: 'integer', format: 'int64', minimum: 1 } });
      expect(id.schema.description).toContain('(404)');
    }
    const deliveries = params('get', '/webhook-endpoints/{endpoint_id}/deliveries');
    expect([...deliveries.keys()].sort()).toEqual(['endpoint_id', ...Object.keys(listDeliveriesQuerySchema.shape)].sort());
    expect(deliveries.get('limit')!.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    const eInvoice = params('get', '/invoices/{invoice_id}/e-invoice');
    expect([...eInvoice.keys()].sort()).toEqual(['invoice_id', ...Object.keys(eInvoiceQuerySchema.shape)].sort());
    expect(eInvoice.get('format')!.schema).toMatchObject({
      enum: ['ubl', 'cii', 'xrechnung-ubl', 'xrechnung-cii', 'peppol', 'cius-ro', 'ksef'],
      default: 'ubl',
    });
    expect(params('get', '/orders/by-nr').get('nr')).toMatchObject({ required: true });
    const body = contract.operation('post', '/orders/{order_id}/files') as unknown as {
      requestBody: { content: Record<string, { schema: { properties: Record<string, { type?: string; items?: { format?: string } }>; required: string[] } }> };
    };
    const upload = body.requestBody.content['multipart/form-data']!.schema;
    expect(upload.required).toEqual(['files']);
    expect(upload.properties.files).toMatchObject({ type: 'array', items: { type: 'string', format: 'binary' } });
    expect(upload.properties).toHaveProperty('category_id');
    // The JSON bodies of the webhook endpoint calls: the validating zod schemas' fields; only a change may come without a body.
    const jsonBodies = [
      ['post', '/webhook-endpoints', createWebhookEndpointSchema, ['url'], true],
      ['patch', '/webhook-endpoints/{endpoint_id}', updateWebhookEndpointSchema, [], false],
      ['post', '/webhook-endpoints/{endpoint_id}/replay', replayWebhookSchema, ['after'], true],
    ] as const;
    for (const [method, path, zodSchema, required, bodyRequired] of jsonBodies) {
      const requestBody = (
        contract.operation(method, path) as unknown as {
          requestBody: { required: boolean; content: Record<string, { schema: { type: string; properties: object; required?: string[] } }> };
        }
      ).requestBody;
      expect(requestBody.required, `${method} ${path}`).toBe(bodyRequired);
      expect(Object.keys(requestBody.content)).toEqual(['application/json']);
      const schema = requestBody.content['application/json']!.schema;
      expect(schema.type).toBe('object');
      expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(zodSchema.shape).sort());
      expect(schema.required ?? []).toEqual(required);
    }
    expect((contract.operation('post', '/webhook-endpoints/{endpoint_id}/rotate-secret') as { requestBody?: unknown }).requestBody).toBeUndefined();
  });

  it('when read, then the security schemes are bearer plus X-Client-Directory, with the legacy directory header', () => {
    const components = contract.doc.components as { securitySchemes: Record<string, Record<string, string>> };
    expect(components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(components.securitySchemes.clientDirectory).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Client-Directory' });
    expect(components.securitySchemes.legacyDirectory).toMatchObject({ type: 'apiKey', in: 'header', name: 'directory' });
    expect(contract.doc.security).toContainEqual({ bearerAuth: [], clientDirectory: [] });
    expect(JSON.stringify(contract.doc.info)).toContain('APP_TIMEZONE');
  });
});

describe('real responses match the document', () => {
  it('when each GET endpoint succeeds, then its 200 fits the documented schema and headers', async () => {
    const categories = (await contract.expectDocumented(await api.call('/orders/file-categories'), 'get', '/orders/file-categories')) as { data: unknown[] };
    expect(categories.data.length).toBeGreaterThan(0);
    await contract.expectDocumented(await api.call('/orders/by-nr?nr=0412'), 'get', '/orders/by-nr');
    const list = (await contract.expectDocumented(await api.call('/invoices?per_page=500'), 'get', '/invoices')) as {
      data: { invoices: Array<{ correct_of: unknown }> };
    };
    expect(list.data.invoices.some((invoice) => invoice.correct_of !== null)).toBe(true);
    await contract.expectDocumented(await api.call('/invoices?page=99'), 'get', '/invoices');
    const pdf = (await contract.expectDocumented(await api.call('/invoices/9001/pdf?lang=de&duplicate=1'), 'get', '/invoices/{invoice_id}/pdf')) as Buffer;
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    for (const format of ['ubl', 'cii']) {
      const xml = (await contract.expectDocumented(
        await api.call(`/invoices/9005/e-invoice?format=${format}`),
        'get',
        '/invoices/{invoice_id}/e-invoice',
      )) as Buffer;
      expect(xml.subarray(0, 5).toString()).toBe('<?xml');
    }
  });

  it('when files are uploaded, then the 201 fits; a validation 422 and a missing order 404 fit too', async () => {
    const ok = multipart([
      { name: 'files', filename: 'cmr.pdf', content: PDF_BYTES },
      { name: 'category_id', content: '1' },
    ]);
    const created = await api.call('/orders/3001/files', { method: 'POST', body: ok.body, headers: { 'Content-Type': ok.contentType } });
    expect(created.status).toBe(201);
    await contract.expectDocumented(created, 'post', '/orders/{order_id}/files');
    const none = multipart([{ name: 'category_id', content: '1' }]);
    const invalid = await api.call('/orders/3001/files', { method: 'POST', body: none.body, headers: { 'Content-Type': none.contentType } });
    expect(invalid.status).toBe(422);
    await contract.expectDocumented(invalid, 'post', '/orders/{order_id}/files');
    const missing = await api.call('/orders/999999/files', { method: 'POST', body: ok.body, headers: { 'Content-Type': ok.contentType } });
    expect(missing.status).toBe(404);
    await contract.expectDocumented(missing, 'post', '/orders/{order_id}/files');
  });

  it("when an order's files are listed, downloaded (whole, ranged, 304, 416) and linked, then every answer fits, the link's too", async () => {
    const { body, contentType } = multipart([{ name: 'files', filename: 'Łódź contract.pdf', content: Buffer.concat([PDF_BYTES, Buffer.from('contract')]) }]);
    const created = (await envelopeOf(await api.call('/orders/3002/files', { method: 'POST', body, headers: { 'Content-Type': contentType } }))).data as {
      uploaded: Array<{ id: number }>;
    };
    const id = created.uploaded[0]!.id;
    const list = (await contract.expectDocumented(await api.call('/orders/3002/files'), 'get', '/orders/{order_id}/files')) as {
      data: Array<{ sha256: string }>;
    };
    const etag = `"${list.data[0]!.sha256}"`;
    const download = '/orders/{order_id}/files/{file_id}';
    for (const headers of [{}, { Range: 'bytes=0-3' }, { Range: 'bytes=-2' }, { 'If-None-Match': etag }, { Range: 'bytes=999999-' }] as Array<
      Record<string, string>
    >) {
      await contract.expectDocumented(await api.call(`/orders/3002/files/${id}`, { headers }), 'get', download);
    }
    await contract.expectDocumented(await api.call(`/orders/3002/files/999999`), 'get', download);
    const link = '/orders/{order_id}/files/{file_id}/link';
    const made = (await contract.expectDocumented(
      await api.call(`/orders/3002/files/${id}/link`, { method: 'POST', body: '{"ttl":60}', headers: { 'Content-Type': 'application/json' } }),
      'post',
      link,
    )) as { data: { url: string } };
    await contract.expectDocumented(
      await api.call(`/orders/3002/files/${id}/link`, { method: 'POST', body: '{"ttl":0}', headers: { 'Content-Type': 'application/json' } }),
      'post',
      link,
    );
    const open = '/file-links/{token}';
    await contract.expectDocumented(await fetch(made.data.url), 'get', open);
    await contract.expectDocumented(await fetch(made.data.url, { headers: { Range: 'bytes=1-2' } }), 'get', open);
    await contract.expectDocumented(await fetch(made.data.url, { headers: { 'If-None-Match': etag } }), 'get', open);
    await contract.expectDocumented(await fetch(`${made.data.url}x`), 'get', open);
    await contract.expectDocumented(await fetch(made.data.url, { method: 'DELETE' }), 'get', open);
  });

  it('when no file can be stored, then the 422 with the attach-files payload fits', async () => {
    const restore = await replaceDirectoryWithFile(`${api.dataDir}/files`);
    try {
      const body = multipart([{ name: 'files', filename: 'photo.png', content: PNG_BYTES }]);
      const response = await api.call('/orders/3001/files', { method: 'POST', body: body.body, headers: { 'Content-Type': body.contentType } });
      expect(response.status).toBe(422);
      const envelope = (await contract.expectDocumented(response, 'post', '/orders/{order_id}/files')) as { message: string; data: { failed: unknown[] } };
      expect(envelope.message).toBe('No files were uploaded');
      expect(envelope.data.failed).toHaveLength(1);
    } finally {
      await restore();
    }
  });

  it('when credentials are missing, then every endpoint answers a 401 that fits', async () => {
    for (const [url, method, path] of CALLS) {
      const response = await api.call(url, { method: method.toUpperCase(), as: null });
      expect(response.status).toBe(401);
      await contract.expectDocumented(response, method, path);
    }
  });

  it('when an upload is retried with its Idempotency-Key, repeats bytes, reuses the key or races it, then the 201 replay, duplicate_of, 422 and 409 fit', async () => {
    const operation = contract.operation('post', '/orders/{order_id}/files') as { parameters?: Array<{ name: string; in: string }> };
    expect(operation.parameters?.some((p) => p.name === 'Idempotency-Key' && p.in === 'header')).toBe(true);
    const content = Buffer.concat([PDF_BYTES, Buffer.from(`openapi idempotency ${Date.now()}`)]);
    const send = (filename: string, key: string) => {
      const { body, contentType } = multipart([{ name: 'files', filename, content }]);
      return api.call('/orders/3002/files', { method: 'POST', body, headers: { 'Content-Type': contentType, 'Idempotency-Key': key } });
    };
    const key = `openapi-${Date.now()}`;
    expect((await send('cmr.pdf', key)).status).toBe(201);
    const replay = await send('cmr.pdf', key);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    await contract.expectDocumented(replay, 'post', '/orders/{order_id}/files');
    const duplicate = await send('cmr.pdf', `${key}-2`);
    const body = (await contract.expectDocumented(duplicate, 'post', '/orders/{order_id}/files')) as { data: { uploaded: Array<{ duplicate_of?: number }> } };
    expect(body.data.uploaded[0]!.duplicate_of).toEqual(expect.any(Number));
    const reused = await send('renamed.pdf', key);
    expect(reused.status).toBe(422);
    await contract.expectDocumented(reused, 'post', '/orders/{order_id}/files');
    const racing = await Promise.all(Array.from({ length: 4 }, () => send('race.pdf', `${key}-race`)));
    const conflict = racing.find((r) => r.status === 409);
    if (conflict) await contract.expectDocumented(conflict, 'post', '/orders/{order_id}/files');
    for (const other of racing.filter((r) => r !== conflict)) await contract.expectDocumented(other, 'post', '/orders/{order_id}/files');
  });

  it('when the order or invoice does not exist or the query is invalid, then the 404 and 422 answers fit', async () => {
    const notFound = await api.call('/orders/by-nr?nr=NO-SUCH-NR');
    expect(notFound.status).toBe(404);
    expect(await contract.expectDocumented(notFound, 'get', '/orders/by-nr')).toMatchObject({ message: 'Order with given nr (NO-SUCH-NR) not found' });
    const noInvoice = await api.call('/invoices/123456/pdf');
    expect(noInvoice.status).toBe(404);
    await contract.expectDocumented(noInvoice, 'get', '/invoices/{invoice_id}/pdf');
    const cases: Array<[string, string]> = [
      ['/invoices?per_page=501', '/invoices'],
      ['/invoices?types=s,x', '/invoices'],
      ['/orders/by-nr', '/orders/by-nr'],
      ['/invoices/9001/pdf?lang=xx', '/invoices/{invoice_id}/pdf'],
    ];
    for (const [url, path] of cases) {
      const response = await api.call(url);
      expect(response.status, url).toBe(422);
      await contract.expectDocumented(response, 'get', path);
    }
  });

  it('when the method is wrong or the query too long, then the 405 and 414 answers fit', async () => {
    const wrongMethod = await api.call('/invoices', { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    await contract.expectDocumented(wrongMethod, 'get', '/invoices');
    const tooLong = await api.call(`/invoices?search=${'a'.repeat(9000)}`);
    expect(tooLong.status).toBe(414);
    await contract.expectDocumented(tooLong, 'get', '/invoices');
  });

  it('when a multipart body cannot be read, then the 400 and its message fit', async () => {
    const { body, contentType } = multipart([{ name: 'files', filename: 'cmr.pdf', content: PDF_BYTES }]);
    const truncated = await api.call('/orders/3001/files', {
      method: 'POST',
      body: body.subarray(0, body.length - 30),
      headers: { 'Content-Type': contentType },
    });
    expect(truncated.status).toBe(400);
    expect(await contract.expectDocumented(truncated, 'post', '/orders/{order_id}/files')).toMatchObject({
      message: 'Bad Request: the multipart body could not be read.',
    });
  });

  it('when webhook endpoints are made, read, changed, rotated, replayed and deleted, then every answer fits, and the refused bodies too', async () => {
    const json = (method: string, url: string, body?: string, contentType = 'application/json') =>
      api.call(url, { method, ...(body === undefined ? {} : { body, headers: { 'Content-Type': contentType } }) });
    const fits = async (response: Response, method: string, path: string, status: number) => {
      expect(response.status, `${method} ${path}`).toBe(status);
      return (await contract.expectDocumented(response, method, path)) as { message: string; data: any; errors?: Record<string, string[]> };
    };
    const created = await fits(
      await json(
        'POST',
        '/webhook-endpoints',
        JSON.stringify({ url: 'https://hooks.example.com/openapi', event_types: ['invoice.updated'], description: 'ERP' }),
      ),
      'post',
      '/webhook-endpoints',
      201,
    );
    expect(created.data.secret).toMatch(/^whsec_/);
    const id = created.data.id as number;
    const endpoint = `/webhook-endpoints/${id}`;
    const listed = await fits(await api.call('/webhook-endpoints'), 'get', '/webhook-endpoints', 200);
    expect(listed.data.map((e: { id: number }) => e.id)).toContain(id);
    await fits(await api.call(endpoint), 'get', '/webhook-endpoints/{endpoint_id}', 200);
    expect(
      (await fits(await json('PATCH', endpoint, JSON.stringify({ enabled: false, description: null })), 'patch', '/webhook-endpoints/{endpoint_id}', 200)).data,
    ).toMatchObject({ enabled: false, description: null });
    // No body: nothing changes, as the document says (the body is optional).
    expect((await fits(await json('PATCH', endpoint), 'patch', '/webhook-endpoints/{endpoint_id}', 200)).data).toMatchObject({
      enabled: false,
      url: 'https://hooks.example.com/openapi',
    });
    expect((await fits(await json('POST', `${endpoint}/rotate-secret`), 'post', '/webhook-endpoints/{endpoint_id}/rotate-secret', 200)).data.secret).toMatch(
      /^whsec_/,
    );
    await fits(await api.call(`${endpoint}/deliveries?limit=5`), 'get', '/webhook-endpoints/{endpoint_id}/deliveries', 200);
    expect(
      (await fits(await json('POST', `${endpoint}/replay`, '{"after":0}'), 'post', '/webhook-endpoints/{endpoint_id}/replay', 202)).data.scheduled,
    ).toEqual(expect.any(Number));
    // A first attempt a replay queued and nobody has made yet (due far ahead): another replay is refused.
    await api.knex('webhook_deliveries').insert({
      endpoint_id: id,
      event_id: 1,
      event_type: 'invoice.updated',
      attempt: 1,
      status: 'pending',
      created: 0,
      next_attempt_at: 4_000_000_000,
      replay: 1,
    });
    expect(await fits(await json('POST', `${endpoint}/replay`, '{"after":0}'), 'post', '/webhook-endpoints/{endpoint_id}/replay', 409)).toMatchObject({
      message: 'A replay of this endpoint is still running.',
    });

    expect(await fits(await json('POST', '/webhook-endpoints', '{"url":'), 'post', '/webhook-endpoints', 400)).toMatchObject({ message: 'Bad Request' });
    expect(await fits(await json('PATCH', endpoint, '{"__proto__":{"enabled":true}}'), 'patch', '/webhook-endpoints/{endpoint_id}', 400)).toMatchObject({
      message: 'Bad Request',
    });
    await fits(await json('PATCH', endpoint, '{}', 'text/plain'), 'patch', '/webhook-endpoints/{endpoint_id}', 415);
    await fits(await json('POST', `${endpoint}/replay`, `{"after":0}${' '.repeat(64 * 1024)}`), 'post', '/webhook-endpoints/{endpoint_id}/replay', 413);
    expect(
      (await fits(await json('POST', '/webhook-endpoints', '[{"url":"https://hooks.example.com/a"}]'), 'post', '/webhook-endpoints', 422)).errors,
    ).toHaveProperty('body');
    expect(
      (await fits(await json('POST', '/webhook-endpoints', '{"url":"http://hooks.example.com/"}'), 'post', '/webhook-endpoints', 422)).errors,
    ).toHaveProperty('url');
    expect(
      (await fits(await json('POST', `${endpoint}/replay`, '{"after":-1}'), 'post', '/webhook-endpoints/{endpoint_id}/replay', 422)).errors,
    ).toHaveProperty('after');

    await fits(await api.call(endpoint, { method: 'DELETE' }), 'delete', '/webhook-endpoints/{endpoint_id}', 200);
    for (const [method, path, suffix] of [
      ['get', '/webhook-endpoints/{endpoint_id}', ''],
      ['delete', '/webhook-endpoints/{endpoint_id}', ''],
      ['get', '/webhook-endpoints/{endpoint_id}/deliveries', '/deliveries'],
    ] as const) {
      expect(await fits(await api.call(`${endpoint}${suffix}`, { method: method.toUpperCase() }), method, path, 404)).toMatchObject({
        message: 'Webhook endpoint not found',
      });
    }
  });

  it('when a JSON body is a string, number, boolean or null, then 422 naming body as for an array', async () => {
    const created = await api.call('/webhook-endpoints', {
      method: 'POST',
      body: '{"url":"https://hooks.example.com/scalar"}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(created.status).toBe(201);
    const { id } = ((await created.json()) as { data: { id: number } }).data;
    try {
      for (const [method, url, path] of [
        ['POST', '/webhook-endpoints', '/webhook-endpoints'],
        ['PATCH', `/webhook-endpoints/${id}`, '/webhook-endpoints/{endpoint_id}'],
      ] as const) {
        for (const body of ['"x"', '1', 'true', 'null']) {
          const response = await api.call(url, { method, body, headers: { 'Content-Type': 'application/json' } });
          expect(response.status, `${method} ${body}`).toBe(422);
          expect(((await contract.expectDocumented(response, method, path)) as { errors: object }).errors, `${method} ${body}`).toHaveProperty('body');
        }
      }
    } finally {
      await api.call(`/webhook-endpoints/${id}`, { method: 'DELETE' });
    }
  });

  it('when the directory has its maximum of webhook endpoints, then another is a 422 with the exact message, and it fits', async () => {
    const max = api.config.webhooks.maxEndpoints;
    const create = () =>
      api.call('/webhook-endpoints', {
        method: 'POST',
        body: JSON.stringify({ url: 'https://hooks.example.com/limit' }),
        headers: { 'Content-Type': 'application/json' },
      });
    const made: number[] = [];
    try {
      for (let i = 0; i < max; i += 1) {
        const response = await create();
        expect(response.status).toBe(201);
        made.push(((await response.json()) as { data: { id: number } }).data.id);
      }
      const refused = await create();
      expect(refused.status).toBe(422);
      expect(await contract.expectDocumented(refused, 'post', '/webhook-endpoints')).toEqual({
        status: 422,
        message: `A client directory may have at most ${max} webhook endpoints.`,
        data: null,
      });
    } finally {
      for (const id of made) await api.call(`/webhook-endpoints/${id}`, { method: 'DELETE' });
    }
  });

  it('when events of every type are delivered to an endpoint, then each POST fits its webhooks entry: the three headers and the event as its body', async () => {
    const received: Array<{ method: string; headers: http.IncomingHttpHeaders; body: string }> = [];
    const types = new Set<string>();
    let allTypes!: () => void;
    const everyType = new Promise<void>((resolve) => (allTypes = resolve));
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        received.push({ method: req.method!, headers: req.headers, body });
        types.add((JSON.parse(body) as { type: string }).type);
        res.writeHead(204).end();
        if (Object.keys(EVENT_SCHEMAS).every((type) => types.has(type))) allTypes();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // A receiver on this machine: private targets allowed, as for an on-premise receiver.
    const delivering = await startTestApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', EVENTS_PUBLISH_INTERVAL_MS: '50' });
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const created = await delivering.call('/webhook-endpoints', {
        method: 'POST',
        body: JSON.stringify({ url }),
        headers: { 'Content-Type': 'application/json' },
      });
      expect(created.status).toBe(201);
      const { id } = ((await created.json()) as { data: { id: number } }).data;
      // The kept events (the fixture's invoices, created) again, then one change of each other kind.
      expect(
        (await delivering.call(`/webhook-endpoints/${id}/replay`, { method: 'POST', body: '{"after":0}', headers: { 'Content-Type': 'application/json' } }))
          .status,
      ).toBe(202);
      await delivering.knex('invoices').where({ id: 9001 }).update({ branch_id: 4242 });
      await delivering.knex('invoices').where({ id: 9002 }).del();
      const { body, contentType } = multipart([
        { name: 'files', filename: 'cmr.pdf', content: Buffer.concat([PDF_BYTES, Buffer.from(`webhooks ${Date.now()}`)]) },
      ]);
      expect((await delivering.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } })).status).toBe(201);
      // An export that fails (its archive cannot be stored), then one that succeeds.
      const exportOnce = async () => {
        const answer = await delivering.call('/exports', { method: 'POST', body: '{"documents":["ubl"]}', headers: { 'Content-Type': 'application/json' } });
        expect(answer.status).toBe(202);
        const exportId = ((await answer.json()) as { data: { id: number } }).data.id;
        await expect
          .poll(async () => ((await (await delivering.call(`/exports/${exportId}`)).json()) as { data: { status: string } }).data.status, { timeout: 20_000 })
          .toMatch(/^(succeeded|failed)$/);
      };
      const restore = await replaceDirectoryWithFile(join(delivering.dataDir, 'files', 'exports'));
      try {
        await exportOnce();
      } finally {
        await restore();
      }
      await exportOnce();
      await everyType;
      for (const request of received) {
        const event = contract.expectWebhookRequest((JSON.parse(request.body) as { type: string }).type, request) as { id: number };
        expect(request.headers['webhook-id']).toBe(String(event.id));
        expect(String(request.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
      }
    } finally {
      await delivering.stop();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('when nr holds a line break and matches nothing, then the 404 naming it fits', async () => {
    const response = await api.call('/orders/by-nr?nr=ab%0Acd');
    expect(response.status).toBe(404);
    expect(await contract.expectDocumented(response, 'get', '/orders/by-nr')).toMatchObject({ message: 'Order with given nr (ab\ncd) not found' });
  });

  it('when page or a branch id is above 2^53-1, then 422, and the document bounds them there', async () => {
    const list = new Map((contract.operation('get', '/invoices').parameters ?? []).map((p) => [p.name, p.schema]));
    expect(list.get('page')).toMatchObject({ maximum: Number.MAX_SAFE_INTEGER });
    expect(list.get('branch_ids')).toMatchObject({ items: { maximum: Number.MAX_SAFE_INTEGER } });
    for (const query of ['page=9007199254740992', 'branch_ids=1,9007199254740992']) {
      const response = await api.call(`/invoices?${query}`);
      expect(response.status, query).toBe(422);
      await contract.expectDocumented(response, 'get', '/invoices');
    }
  });

  it('when a list item or a file is empty, then 422, and the schemas say so: minItems, minLength', async () => {
    const list = new Map((contract.operation('get', '/invoices').parameters ?? []).map((p) => [p.name, p.schema]));
    for (const name of ['types', 'statuses', 'branch_ids', 'customer_vats']) expect(list.get(name), name).toMatchObject({ minItems: 1 });
    // On the wire an item is what lies between commas, trimmed: no comma, not spaces only.
    expect(list.get('customer_vats')).toMatchObject({ items: { minLength: 1, maxLength: 64, pattern: '^[^,]*[^,\\s][^,]*$' } });
    const upload = (
      contract.operation('post', '/orders/{order_id}/files') as unknown as {
        requestBody: { content: Record<string, { schema: { properties: { files: { items: unknown } } } }> };
      }
    ).requestBody.content['multipart/form-data']!.schema.properties.files.items;
    expect(upload).toMatchObject({ minLength: 1 });
    for (const query of ['customer_vats=PL1,,PL2', 'customer_vats=PL1,%20%20']) {
      const emptyItem = await api.call(`/invoices?${query}`);
      expect(emptyItem.status, query).toBe(422);
      await contract.expectDocumented(emptyItem, 'get', '/invoices');
    }
    const { body, contentType } = multipart([{ name: 'files', filename: 'empty.pdf', content: Buffer.alloc(0) }]);
    const emptyFile = await api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } });
    expect(emptyFile.status).toBe(422);
    await contract.expectDocumented(emptyFile, 'post', '/orders/{order_id}/files');
  });

  it('when a header holds a control byte, the query is over 8 KiB or the headers over 64 KiB, then every operation answers a 400, 414 or 431 that fits', async () => {
    const { host } = new URL(api.root);
    const credentials = Object.entries(authHeaders('baltic'))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    for (const [url, method, path] of CALLS) {
      const controlByte = await rawRequest(
        api.root,
        `${method.toUpperCase()} /v1${url} HTTP/1.1\r\nHost: ${host}\r\n${credentials}If-None-Match: sQ\x7f\r\nConnection: close\r\n\r\n`,
      );
      expect(controlByte.status, `${method} ${url}`).toBe(400);
      expect(await contract.expectDocumented(controlByte, method, path)).toMatchObject({ message: 'Bad Request' });
      const longQuery = await api.call(`${url}${url.includes('?') ? '&' : '?'}x=${'a'.repeat(9000)}`, { method: method.toUpperCase() });
      expect(longQuery.status, `${method} ${url}`).toBe(414);
      await contract.expectDocumented(longQuery, method, path);
      const bigHeaders = await api.call(url, { method: method.toUpperCase(), headers: { 'X-Padding': 'p'.repeat(70 * 1024) } });
      expect(bigHeaders.status, `${method} ${url}`).toBe(431);
      await contract.expectDocumented(bigHeaders, method, path);
    }
  });

  it('when the rate limit is exceeded, then the 429 fits, and the document itself is never limited', async () => {
    const limited = await startTestApi({ RATE_LIMIT_MAX: '1' });
    try {
      const first = await limited.call('/orders/file-categories');
      expect(first.status).toBe(200);
      await contract.expectDocumented(first, 'get', '/orders/file-categories');
      const second = await limited.call('/orders/file-categories');
      expect(second.status).toBe(429);
      await contract.expectDocumented(second, 'get', '/orders/file-categories');
      for (let i = 0; i < 5; i += 1) {
        const doc = await fetch(`${limited.base}/openapi.json`);
        expect(doc.status).toBe(200);
        expect(doc.headers.get('x-ratelimit-limit')).toBeNull();
        expect(((await doc.json()) as OpenApiDoc).openapi).toBe('3.1.0');
      }
    } finally {
      await limited.stop();
    }
  });

  it("when the rate limiter's store does not answer, then the request goes through uncounted, and its answer without rate-limit headers fits", async () => {
    // Nothing listens on this port: every Redis command fails at once, and the limiter fails open.
    const uncounted = await startTestApi({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, { profile: 'embedded' });
    try {
      const response = await uncounted.call('/orders/file-categories');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
      await contract.expectDocumented(response, 'get', '/orders/file-categories');
    } finally {
      await uncounted.stop();
    }
  });

  it("when the rate limit is reported, then the document states this deployment's limit", async () => {
    const response = await api.call('/orders/file-categories');
    await envelopeOf(response);
    const limit = response.headers.get('x-ratelimit-limit');
    expect((contract.doc.info as { description: string }).description).toContain(`${limit} requests per ${api.config.rateLimit.windowSeconds} s`);
  });
});
