import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eInvoiceQuerySchema, invoicePdfQuerySchema, listInvoicesQuerySchema } from '@logi/domain';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES, PNG_BYTES } from '../support/multipart.js';
import { OpenApiContract, type OpenApiDoc } from '../support/openapi-contract.js';
import { replaceDirectoryWithFile } from '../support/break-storage.js';
import { rawRequest } from '../support/raw-http.js';
import { authHeaders } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';

const SPEC_OPERATIONS = [
  ['post', '/orders/{order_id}/files'],
  ['get', '/orders/file-categories'],
  ['get', '/orders/by-nr'],
  ['get', '/invoices'],
  ['get', '/invoices/{invoice_id}/pdf'],
  // Beyond the spec's five: the contract's e-invoice addition.
  ['get', '/invoices/{invoice_id}/e-invoice'],
  // And its events addition: the change feed.
  ['get', '/events'],
] as const;

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
    const result = await validator.validate(contract.doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(contract.doc.servers).toEqual([expect.objectContaining({ url: '/v1' })]);
  });

  it('when read, then it covers exactly the five endpoints of the spec and the e-invoice and events additions, each with its error answers and exact messages', () => {
    const listed = Object.entries(contract.doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`));
    expect(listed.sort()).toEqual(SPEC_OPERATIONS.map(([method, path]) => `${method} ${path}`).sort());
    for (const [method, path] of SPEC_OPERATIONS) {
      const responses = contract.operation(method, path).responses;
      const expected = ['400', '401', '405', '414', '429', '431', '500', '503', ...(path === '/orders/file-categories' ? [] : ['404', '422'])];
      if (path === '/invoices' || path === '/events') expected.splice(expected.indexOf('404'), 1);
      for (const status of expected) expect(responses[status], `${method} ${path} ${status}`).toBeDefined();
      const message = (status: string) => JSON.stringify(responses[status]!.content!['application/json']!.schema);
      expect(message('401')).toContain('"const":"Authentication failed"');
      expect(message('429')).toContain('"const":"Too Many Attempts."');
      expect(message('503')).toContain('"const":"Service Unavailable"');
      expect(responses['429']!.headers).toHaveProperty('Retry-After');
      expect(responses['503']!.headers).toHaveProperty('Retry-After');
      expect(responses['405']!.headers).toHaveProperty('Allow');
    }
    const notFound = (method: string, path: string) => JSON.stringify(contract.operation(method, path).responses['404']!.content!['application/json']!.schema);
    expect(notFound('post', '/orders/{order_id}/files')).toContain('"const":"Order not found"');
    expect(notFound('get', '/orders/by-nr')).toContain('Order with given nr');
    expect(notFound('get', '/invoices/{invoice_id}/pdf')).toContain('"const":"Invoice not found"');
    expect(contract.operation('post', '/orders/{order_id}/files').responses['413']).toBeDefined();
    expect(JSON.stringify(contract.operation('get', '/invoices').responses['422'])).toContain('The given data was invalid.');
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
    expect(list.get('per_page')!.schema).toEqual({ type: 'integer', minimum: 1, maximum: 500, default: 250 });
    expect(list.get('page')!.schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(list.get('period')!.schema.enum).toEqual(['cur_month', 'prev_month', 'last_30_days', 'last_60_days', 'last_90_days', 'custom']);
    expect(list.get('sort_dir')!.schema).toMatchObject({ enum: ['asc', 'desc'], default: 'desc' });
    expect(list.get('types')).toMatchObject({ style: 'form', explode: false, schema: { type: 'array', items: { enum: ['s', 'c', 'p'] } } });
    const pdf = params('get', '/invoices/{invoice_id}/pdf');
    expect([...pdf.keys()].sort()).toEqual(['invoice_id', ...Object.keys(invoicePdfQuerySchema.shape)].sort());
    expect(pdf.get('lang')!.schema).toMatchObject({ enum: ['cs', 'de', 'en', 'pl', 'ro', 'tr'], default: 'en' });
    // Shaped for generated clients (numbers and a boolean), while the wire stays digits and true/false/1/0.
    expect(pdf.get('duplicate')).toMatchObject({ schema: { type: 'boolean', default: false }, description: expect.stringContaining('`1` and `0` are accepted too') });
    for (const [method, path, name] of [['get', '/invoices/{invoice_id}/pdf', 'invoice_id'], ['get', '/invoices/{invoice_id}/e-invoice', 'invoice_id'], ['post', '/orders/{order_id}/files', 'order_id']] as const) {
      const id = params(method, path).get(name)!;
      expect(id).toMatchObject({ in: 'path', required: true, schema: { type: 'integer', minimum: 1 } });
      expect(id.schema.description).toContain('(404)');
    }
    const eInvoice = params('get', '/invoices/{invoice_id}/e-invoice');
    expect([...eInvoice.keys()].sort()).toEqual(['invoice_id', ...Object.keys(eInvoiceQuerySchema.shape)].sort());
    expect(eInvoice.get('format')!.schema).toMatchObject({ enum: ['ubl', 'cii'], default: 'ubl' });
    expect(params('get', '/orders/by-nr').get('nr')).toMatchObject({ required: true });
    const body = contract.operation('post', '/orders/{order_id}/files') as unknown as {
      requestBody: { content: Record<string, { schema: { properties: Record<string, { type?: string; items?: { format?: string } }>; required: string[] } }> };
    };
    const upload = body.requestBody.content['multipart/form-data']!.schema;
    expect(upload.required).toEqual(['files']);
    expect(upload.properties.files).toMatchObject({ type: 'array', items: { type: 'string', format: 'binary' } });
    expect(upload.properties).toHaveProperty('category_id');
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
    const list = (await contract.expectDocumented(await api.call('/invoices?per_page=500'), 'get', '/invoices')) as { data: { invoices: Array<{ correct_of: unknown }> } };
    expect(list.data.invoices.some((invoice) => invoice.correct_of !== null)).toBe(true);
    await contract.expectDocumented(await api.call('/invoices?page=99'), 'get', '/invoices');
    const pdf = (await contract.expectDocumented(await api.call('/invoices/9001/pdf?lang=de&duplicate=1'), 'get', '/invoices/{invoice_id}/pdf')) as Buffer;
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    for (const format of ['ubl', 'cii']) {
      const xml = (await contract.expectDocumented(await api.call(`/invoices/9005/e-invoice?format=${format}`), 'get', '/invoices/{invoice_id}/e-invoice')) as Buffer;
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
    const calls: Array<[string, string, string]> = [
      ['/orders/3001/files', 'post', '/orders/{order_id}/files'],
      ['/orders/file-categories', 'get', '/orders/file-categories'],
      ['/orders/by-nr?nr=1', 'get', '/orders/by-nr'],
      ['/invoices', 'get', '/invoices'],
      ['/invoices/9001/pdf', 'get', '/invoices/{invoice_id}/pdf'],
      ['/invoices/9001/e-invoice', 'get', '/invoices/{invoice_id}/e-invoice'],
    ];
    for (const [url, method, path] of calls) {
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
    const truncated = await api.call('/orders/3001/files', { method: 'POST', body: body.subarray(0, body.length - 30), headers: { 'Content-Type': contentType } });
    expect(truncated.status).toBe(400);
    expect(await contract.expectDocumented(truncated, 'post', '/orders/{order_id}/files')).toMatchObject({ message: 'Bad Request: the multipart body could not be read.' });
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
    const upload = (contract.operation('post', '/orders/{order_id}/files') as unknown as { requestBody: { content: Record<string, { schema: { properties: { files: { items: unknown } } } }> } })
      .requestBody.content['multipart/form-data']!.schema.properties.files.items;
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
    const credentials = Object.entries(authHeaders('baltic')).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const calls: Array<[string, string, string]> = [
      ['/orders/3001/files', 'post', '/orders/{order_id}/files'],
      ['/orders/file-categories', 'get', '/orders/file-categories'],
      ['/orders/by-nr?nr=1', 'get', '/orders/by-nr'],
      ['/invoices', 'get', '/invoices'],
      ['/invoices/9001/pdf', 'get', '/invoices/{invoice_id}/pdf'],
      ['/invoices/9001/e-invoice', 'get', '/invoices/{invoice_id}/e-invoice'],
    ];
    for (const [url, method, path] of calls) {
      const controlByte = await rawRequest(api.root, `${method.toUpperCase()} /v1${url} HTTP/1.1\r\nHost: ${host}\r\n${credentials}If-None-Match: sQ\x7f\r\nConnection: close\r\n\r\n`);
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

  it('when the rate limiter\'s store does not answer, then the request goes through uncounted, and its answer without rate-limit headers fits', async () => {
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

  it('when the rate limit is reported, then the document states this deployment\'s limit', async () => {
    const response = await api.call('/orders/file-categories');
    await envelopeOf(response);
    const limit = response.headers.get('x-ratelimit-limit');
    expect((contract.doc.info as { description: string }).description).toContain(`${limit} requests per ${api.config.rateLimit.windowSeconds} s`);
  });
});
