/**
 * The OpenAPI document, driven (issue 17): requests generated from the
 * document the server publishes, for every operation in it, with valid and
 * invalid values of every parameter and body field, and the refusals any
 * request can meet (a control byte in a header, a query over 8 KiB, headers
 * over 64 KiB, no credentials, a method the path does not take, a body cut
 * short), and those any JSON body can meet (not JSON, another content type,
 * over 64 KiB). Every answer must be documented for its operation, with the
 * headers the document lists and a body that fits its schema; and its status
 * must be what the values call for: a value its schema refuses is a 422 (a
 * path id: 404), values their schemas accept are never a 400 or a 422, save
 * the cross-field rules of a `custom` period, which the document states in
 * words. Seeds are random; fast-check prints the seed and the shrunk request
 * on failure.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@logi/config';
import { buildOpenApiDocument } from '@logi/api';
import { authHeaders, startTestApi, type TestApi } from '../support/api-harness.js';
import { OpenApiContract, type OpenApiDoc } from '../support/openapi-contract.js';
import { requestArbitrary, type GeneratedRequest, type Hints } from '../support/openapi-requests.js';
import { forbiddenHost, urlWith } from '../support/hostile-webhook-urls.js';
import { rawRequest } from '../support/raw-http.js';

/** The operations, read from the document the server builds (the served one is checked to list the same). */
const OPERATIONS = Object.entries(buildOpenApiDocument(loadConfig({})).paths).flatMap(([path, operations]) =>
  Object.keys(operations).map((method) => [method, path] as const),
);

/**
 * Webhook URLs the document allows in words: an https URL of a public host,
 * at most 2048 characters. Names under example.com (a reserved domain with
 * no such hosts): here they resolve to nothing, which registration accepts
 * (each delivery checks the address it connects to); elsewhere to public
 * addresses. Never an address literal, so that no delivery reaches a real host.
 */
const WEBHOOK_HOST = fc.constantFrom('hooks.example.com', 'HOOKS.Example.COM', 'a-1.hooks.example.com', 'hooks.example.com.');
const validWebhookUrl = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('https', 'HTTPS'),
      WEBHOOK_HOST,
      fc.constantFrom('', ':443', ':8443', ':1', ':65535'),
      fc.array(fc.stringMatching(/^([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-F]{2}){1,12}$/), { maxLength: 4 }),
      fc.constantFrom('', '?', '?a=1&b=%C3%B3', '#part', '?x=y#z'),
    )
    .map(([scheme, host, port, segments, tail]) => `${scheme}://${host}${port}/${segments.join('/')}${tail}`),
  // Exactly at the limit.
  WEBHOOK_HOST.map((host) => `https://${host}/`).map((start) => start + 'a'.repeat(2048 - start.length)),
);
/**
 * Webhook URLs a rule the document states in words refuses, whatever DNS
 * says: another scheme, user info, over 2048 characters, not a URL, or a
 * loopback, private, link-local or other non-public address or localhost
 * name in any spelling (the SSRF tests' generator).
 */
const refusedWebhookUrl = fc.oneof(
  fc.constantFrom(
    'http://hooks.example.com/',
    'ftp://hooks.example.com/',
    'https://user:secret@hooks.example.com/',
    'https://user@hooks.example.com/',
    'https://169.254.169.254/latest/meta-data/',
    'hooks.example.com/hook',
    'https:hooks.example.com',
    'https:/hooks.example.com',
    ' https://hooks.example.com/',
    'https://hooks.example.com/\n',
    'https://',
    'https://[::1/',
  ),
  urlWith(forbiddenHost),
  WEBHOOK_HOST.map((host) => `https://${host}/`).map((start) => start + 'a'.repeat(2049 - start.length)),
  fc.string({ minLength: 1, maxLength: 30 }).filter((text) => !/^https:/i.test(text)),
);

/** What the document cannot know: which ids exist for the test client, and which lookups may find nothing. */
const HINTS: Hints = {
  existing: {
    order_id: ['3001', '3002', '3005'],
    // Two invoices: every PDF version of them is rendered once at most.
    invoice_id: ['9001', '9005'],
    category_id: ['1', '2', '3', 'null'],
  },
  extra: { 'If-None-Match': ['*', '*', 'W/"x"'] },
  // A long poll holds its answer up to `wait` seconds when nothing happens: only 0 is sent of the valid values.
  only: { wait: ['0'] },
  stated: {
    url: { valid: validWebhookUrl, refused: refusedWebhookUrl },
    // An export's filters are the list's query parameters, whose rules the list's own property test covers.
    filters: {
      valid: fc.constantFrom({}, { search: 'BH' }, { types: 's,c' }, { period: 'cur_month', statuses: 'paid' }, { customer_country: 'PL', search: '' }),
      refused: fc.constantFrom({ period: 'yesterday' }, { page: '1' }, { sort_dir: 'asc' }, { types: 's,x' }, { search: 5 }, 'period=cur_month', [], null),
    },
    // As the PDF's query reads it, or a JSON boolean.
    duplicate: { valid: fc.constantFrom(true, false, 'true', 'false', '1', '0'), refused: fc.constantFrom('yes', 2, null, 'TRUE') },
  },
};
/** Valid values of these look something up and may find nothing (404). */
const LOOKUPS = ['nr'];

/** Requests per operation: the list and the lookup take the most parameters; a PDF may need a render; operations with nothing but an id or nothing at all, the fewest. */
const RUNS: Record<string, number> = {
  'get /invoices': 150,
  'get /orders/by-nr': 100,
  'get /orders/file-categories': 30,
  'get /invoices/{invoice_id}/pdf': 50,
  'get /webhook-endpoints': 30,
  'get /webhook-endpoints/{endpoint_id}': 30,
  'delete /webhook-endpoints/{endpoint_id}': 40,
  'post /webhook-endpoints/{endpoint_id}/rotate-secret': 30,
  'get /webhook-endpoints/{endpoint_id}/deliveries': 40,
  // Each valid one queues an export (cancelled at once).
  'post /exports': 30,
};
const DEFAULT_RUNS = 60;
/** OPENAPI_PROPERTY_SCALE=20 for a long hunt; the time limit below then stops each operation first. */
const SCALE = Number(process.env.OPENAPI_PROPERTY_SCALE ?? 1);

/** The limit of a JSON body, as the document's 413 states it ("over 64 KiB"). */
const JSON_BODY_LIMIT = 64 * 1024;

const ANY_REQUEST = ['no-credentials', 'wrong-method', 'control-byte', 'long-query', 'big-headers'] as const;
/** `cut-body` cuts a multipart body before its closing boundary, a JSON one before its last byte; `full-body` is exactly at the limit (a valid request). */
const BODY_VARIANTS = { multipart: ['cut-body'], json: ['cut-body', 'not-json', 'other-type', 'big-body', 'full-body'] } as const;
type Variant = 'plain' | (typeof ANY_REQUEST)[number] | (typeof BODY_VARIANTS)[keyof typeof BODY_VARIANTS][number];
type BodyKind = keyof typeof BODY_VARIANTS;

/** Mostly plain requests; the rest meet one refusal each (a body's own only where the request has that body: elsewhere it is sent plain). */
function variantArb(kind: BodyKind | null): fc.Arbitrary<Variant> {
  const others: Variant[] = [...ANY_REQUEST, ...(kind ? BODY_VARIANTS[kind] : [])];
  return fc.oneof({ weight: 10, arbitrary: fc.constant<Variant>('plain') }, { weight: others.length, arbitrary: fc.constantFrom(...others) });
}
const CONTROL_BYTES = [...Array.from({ length: 32 }, (_, c) => c).filter((c) => c !== 9 && c !== 10 && c !== 13), 0x7f].map((c) => String.fromCharCode(c));
/** What a variant sends: its control byte, its method, its body. */
const tweakArb = fc.record({
  controlHeader: fc.record({
    name: fc.constantFrom('If-None-Match', 'X-Client-Directory', 'Idempotency-Key', 'X-Probe'),
    value: fc
      .tuple(fc.stringMatching(/^[\x21-\x7e]{0,6}$/), fc.constantFrom(...CONTROL_BYTES), fc.stringMatching(/^[\x21-\x7e]{0,6}$/))
      .map((parts) => parts.join('')),
  }),
  wrongMethod: fc.nat(),
  notJson: fc.constantFrom(
    '{',
    '{"url":',
    "{'url':'x'}",
    '{"a":1,}',
    '{"a":1}}',
    '[1,]',
    'NaN',
    'undefined',
    'tru',
    '01',
    '   ',
    '\u0000',
    'url=https%3A%2F%2Fhooks.example.com',
  ),
  // '' sends none.
  otherType: fc.constantFrom(
    '',
    'text/plain',
    'text/plain; charset=utf-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/merge-patch+json',
    'application/xml',
    'text/json',
    'application/jsonx',
  ),
  overBy: fc.nat({ max: 8 * 1024 }),
});
type Tweak = typeof tweakArb extends fc.Arbitrary<infer T> ? T : never;

/** Methods a path may not take: a wrong one is one its path item does not list (HEAD and OPTIONS come with GET and with every path). */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

let api: TestApi;
let contract: OpenApiContract;

/**
 * Webhook endpoints the requests name: a few made before the runs, whose
 * first ids the generator knows; a generated DELETE that removes one is
 * followed by a new one, which the same first id then names (`aliases`).
 * A generated creation is removed at once, so the directory stays far
 * from its maximum of endpoints (10; that 422 is the document test's).
 */
const aliases = new Map<string, string>();
const POOL_SIZE = 3;

async function createEndpoint(note: string): Promise<string> {
  // invoice.deleted: nothing deletes invoices here, so the pool is rarely sent anything (replays aside).
  const response = await api.call('/webhook-endpoints', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ url: `https://hooks.example.com/${note}`, event_types: ['invoice.deleted'] }),
  });
  const body = (await response.json()) as { data: { id: number } };
  expect(response.status, JSON.stringify(body)).toBe(201);
  return String(body.data.id);
}

beforeAll(async () => {
  // The rules for webhook URLs as the document states them: no private targets (whatever the environment says).
  api = await startTestApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }, { label: 'openapi-property' });
  contract = new OpenApiContract((await (await fetch(`${api.base}/openapi.json`)).json()) as OpenApiDoc);
  for (let i = 0; i < POOL_SIZE; i += 1) {
    const id = await createEndpoint(`pool-${i}`);
    aliases.set(id, id);
  }
});
afterAll(async () => {
  await api?.stop();
});

/** The target with the pool's first ids replaced by the endpoints they name now. */
function currentTarget(target: string): string {
  return target.replace(/^\/webhook-endpoints\/([^/?]+)/, (whole, id: string) => (aliases.has(id) ? `/webhook-endpoints/${aliases.get(id)}` : whole));
}

/** Whether a generated id the hints do not know names an endpoint all the same (one made again for the pool). */
function namesSomething(request: GeneratedRequest, name: string): boolean {
  return name === 'endpoint_id' && [...aliases.values()].includes(request.sent[name]!);
}

/** Keeps the pool whole and the directory below its maximum after an answer that made or removed an endpoint. */
async function settle(request: GeneratedRequest, variant: Variant, status: number, body: unknown): Promise<void> {
  if (variant === 'wrong-method') return;
  if (request.method === 'POST' && request.path === '/webhook-endpoints' && status === 201) {
    const id = (body as { data: { id: number } }).data.id;
    expect((await api.call(`/webhook-endpoints/${id}`, { method: 'DELETE' })).status).toBe(200);
  }
  // An export made is cancelled at once: every generated export id then names nothing (404), and nothing renders behind the test.
  if (request.method === 'POST' && request.path === '/exports' && status === 202) {
    const id = (body as { data: { id: number } }).data.id;
    expect((await api.call(`/exports/${id}`, { method: 'DELETE' })).status).toBe(200);
  }
  if (request.method === 'DELETE' && request.path === '/webhook-endpoints/{endpoint_id}' && status === 200) {
    const removed = /^\/webhook-endpoints\/(\d+)$/.exec(currentTarget(request.target))![1]!;
    const first = [...aliases].find(([, now]) => now === removed)?.[0];
    if (first === undefined) throw new Error(`endpoint ${removed} was removed, but the pool did not hold it`);
    aliases.set(first, await createEndpoint(`pool-${first}-again`));
  }
}

let sequence = 0;
/** A valid Idempotency-Key made unique, so that no two generated uploads share one (that is a 422 of its own). */
function unique(key: string): string {
  const suffix = `-${process.pid}-${(sequence += 1)}`;
  return key.slice(0, 255 - suffix.length) + suffix;
}

/** The variant as sent: a body's own variant where the request has no such body is a plain request. */
function effectiveVariant(request: GeneratedRequest, drawn: Variant): Variant {
  const bodyVariant = (Object.values(BODY_VARIANTS) as ReadonlyArray<readonly string[]>).some((list) => list.includes(drawn));
  if (!bodyVariant) return drawn;
  return request.body && (BODY_VARIANTS[request.body.kind] as readonly string[]).includes(drawn) ? drawn : 'plain';
}

/** JSON text padded with spaces (still the same JSON) to `size` bytes. */
function padded(bytes: Buffer, size: number): Buffer {
  if (bytes.length > size) throw new Error(`a generated body of ${bytes.length} bytes is over ${size}`);
  return Buffer.concat([bytes, Buffer.alloc(size - bytes.length, ' ')]);
}

function bodyToSend(request: GeneratedRequest, variant: Variant, tweak: Tweak): { bytes: Buffer; contentType: string } | null {
  const body = request.body;
  if (!body) return null;
  switch (variant) {
    case 'plain':
    case 'no-credentials':
      return body;
    case 'cut-body':
      return {
        ...body,
        bytes: body.kind === 'multipart' ? body.bytes.subarray(0, body.bytes.lastIndexOf('\r\n--')) : body.bytes.subarray(0, body.bytes.length - 1),
      };
    case 'not-json':
      return { ...body, bytes: Buffer.from(tweak.notJson) };
    case 'other-type':
      return { ...body, contentType: tweak.otherType };
    case 'big-body':
      return { ...body, bytes: padded(body.bytes, JSON_BODY_LIMIT + 1 + tweak.overBy) };
    case 'full-body':
      return { ...body, bytes: padded(body.bytes, JSON_BODY_LIMIT) };
    default:
      // A GET may not carry a body, and the other refusals come before any body is read.
      return null;
  }
}

function wrongMethod(path: string, pick: number): string {
  const listed = Object.keys(contract.doc.paths[path]!).map((method) => method.toUpperCase());
  const unlisted = METHODS.filter((method) => !listed.includes(method));
  return unlisted[pick % unlisted.length]!;
}

async function send(request: GeneratedRequest, variant: Variant, tweak: Tweak): Promise<Response> {
  const headers: Record<string, string> = { ...authHeaders('baltic'), ...request.headers };
  if (headers['Idempotency-Key'] !== undefined && !request.invalid.other.includes('Idempotency-Key'))
    headers['Idempotency-Key'] = unique(headers['Idempotency-Key']);
  const path = currentTarget(request.target);
  if (variant === 'control-byte') {
    const { host } = new URL(api.root);
    const lines = Object.entries({ Host: host, ...headers, [tweak.controlHeader.name]: tweak.controlHeader.value, 'Content-Length': '0', Connection: 'close' });
    return rawRequest(api.root, `${request.method} /v1${path} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`);
  }
  if (variant === 'no-credentials') for (const name of Object.keys(authHeaders('baltic'))) delete headers[name];
  if (variant === 'big-headers') headers['X-Padding'] = 'p'.repeat(70 * 1024);
  const target = variant === 'long-query' ? `${path}${path.includes('?') ? '&' : '?'}padding=${'q'.repeat(8 * 1024)}` : path;
  const method = variant === 'wrong-method' ? wrongMethod(request.path, tweak.wrongMethod) : request.method;
  const body = bodyToSend(request, variant, tweak);
  if (body?.contentType) headers['Content-Type'] = body.contentType;
  return fetch(`${api.base}${target}`, { method, headers, body: body?.bytes });
}

/** The statuses the document allows for this request, from what its values are. */
function expectedStatuses(request: GeneratedRequest, variant: Variant, successes: number[], open = false): number[] {
  // An operation open to all (`security: []`, a file link) answers a request without credentials as any other.
  const refusal: Partial<Record<Variant, number>> = {
    'control-byte': 400,
    'long-query': 414,
    'big-headers': 431,
    'wrong-method': 405,
    ...(open ? {} : { 'no-credentials': 401 }),
  };
  if (refusal[variant] !== undefined) return [refusal[variant]];
  // A file link's token is judged by its signature, not its shape: no generated token is one this service signed (403);
  // one that is no path segment at all (a `/` in it) names no route (404).
  if (request.sent.token !== undefined) return [403];
  if (request.invalid.path.includes('token')) return [403, 404];
  const unknownIds = request.unknownIds.filter((name) => !namesSomething(request, name));
  const jsonRefusal: Partial<Record<Variant, number>> = { 'cut-body': 400, 'not-json': 400, 'other-type': 415, 'big-body': 413 };
  // The document's 400 in words: a `__proto__` key anywhere is refused like JSON that does not parse.
  const refusedJson =
    request.body?.kind === 'json' && (variant === 'plain' || variant === 'full-body') && hasProtoKey(request.body.bytes) ? 400 : jsonRefusal[variant];
  // A JSON body is read before the path id is looked up; the document does not say which comes first.
  // A JSON number cut before its last digit may still read (`10` → `1`, `0` → no body at all): then it is a
  // body that is not an object, 422, like any other.
  const cutStillReads = variant === 'cut-body' && request.body?.kind === 'json' && readsAsJson(request.body.bytes.subarray(0, request.body.bytes.length - 1));
  if (request.body?.kind === 'json' && refusedJson !== undefined) {
    return [refusedJson, ...(cutStillReads ? [422] : []), ...(request.invalid.path.length > 0 || unknownIds.length > 0 ? [404] : [])];
  }
  if (request.invalid.path.length > 0) return [404];
  const nothingNamed = unknownIds.length > 0 || LOOKUPS.some((name) => request.sent[name] !== undefined) ? [404] : [];
  // A body that cannot be read is a 400, unless a value read before it (a header) is refused first.
  if (variant === 'cut-body') return [...nothingNamed, 400, ...(request.invalid.other.length > 0 ? [422] : [])];
  if (request.invalid.other.length > 0) return [...nothingNamed, 422];
  const conditional = request.headers['If-None-Match'] !== undefined ? [304] : [];
  return [...nothingNamed, ...successes, ...conditional];
}

/** Whether bytes are empty (no body) or JSON text that parses. */
function readsAsJson(bytes: Buffer): boolean {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether JSON text has an object with a `__proto__` key, at any depth. */
function hasProtoKey(bytes: Buffer): boolean {
  let found = false;
  JSON.parse(bytes.toString(), function (this: object, key: string, value: unknown) {
    if (key === '__proto__' && Object.prototype.hasOwnProperty.call(this, key)) found = true;
    return value;
  });
  return found;
}

/** What the operation's request body is, as the document says. */
function bodyKind(method: string, path: string): BodyKind | null {
  const content = (contract.operation(method, path) as { requestBody?: { content: Record<string, unknown> } }).requestBody?.content ?? {};
  if ('application/json' in content) return 'json';
  if ('multipart/form-data' in content) return 'multipart';
  return null;
}

describe('requests generated from the OpenAPI document', () => {
  it('when the served document is read, then it lists the operations this test drives, and the JSON body limit it sends against', () => {
    const served = Object.entries(contract.doc.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`));
    expect(served.sort()).toEqual(OPERATIONS.map(([method, path]) => `${method} ${path}`).sort());
    const jsonOperations = OPERATIONS.filter(([method, path]) => bodyKind(method, path) === 'json');
    expect(jsonOperations.length).toBeGreaterThan(0);
    for (const [method, path] of jsonOperations)
      expect(contract.operation(method, path).responses['413']!.description, `${method} ${path}`).toContain('over 64 KiB');
  });

  it.each(OPERATIONS)(
    'when %s %s gets generated values of every parameter, valid and invalid, then every answer is documented and fits, with the status its values call for',
    async (method, path) => {
      const hints: Hints = { ...HINTS, existing: { ...HINTS.existing, endpoint_id: [...aliases.keys()] } };
      const security = (contract.operation(method, path) as { security?: unknown[] }).security;
      const open = Array.isArray(security) && security.length === 0;
      const successes = Object.keys(contract.operation(method, path).responses)
        .filter((status) => /^2\d\d$/.test(status))
        .map(Number);
      await fc.assert(
        fc.asyncProperty(requestArbitrary(contract.doc, method, path, hints), variantArb(bodyKind(method, path)), tweakArb, async (request, drawn, tweak) => {
          const variant = effectiveVariant(request, drawn);
          const context = JSON.stringify({
            variant,
            method: request.method,
            target: currentTarget(request.target).slice(0, 300),
            headers: request.headers,
            sent: request.sent,
            invalid: request.invalid,
            tweak: {
              'control-byte': tweak.controlHeader,
              'wrong-method': tweak.wrongMethod,
              'not-json': tweak.notJson,
              'other-type': tweak.otherType,
              'big-body': tweak.overBy,
            }[variant as string],
          });
          const response = await send(request, variant, tweak);
          const status = response.status;
          const body = (await contract.expectDocumented(response, method, path)) as { errors?: Record<string, string[]> } | null;
          await settle(request, variant, status, body);
          const expected = expectedStatuses(request, variant, successes, open);
          // A `custom` period needs one of its dates, the first not after the second: rules between values, stated in words.
          const customPeriodRule =
            status === 422 &&
            request.sent.period === 'custom' &&
            Object.keys(body?.errors ?? {}).every((field) => field === 'date_from' || field === 'date_to');
          // A national e-invoice format needs data of the invoice (a Leitweg-ID, a Polish seller, ...): 422 naming each missing item on `format`.
          const nationalFormatRule =
            status === 422 &&
            path === '/invoices/{invoice_id}/e-invoice' &&
            typeof request.sent.format === 'string' &&
            !['ubl', 'cii'].includes(request.sent.format) &&
            Object.keys(body?.errors ?? {}).join() === 'format' &&
            (body?.errors?.format ?? []).every((message) => message.startsWith(`format=${String(request.sent.format)} needs `));
          // A replay while an earlier one of the same endpoint still has events waiting for their first attempt (a
          // generated PATCH may have widened the endpoint's event types): 409, a state of the endpoint, not of the values.
          const replayRunningRule =
            status === 409 &&
            path === '/webhook-endpoints/{endpoint_id}/replay' &&
            (body as { message?: unknown } | null)?.message === 'A replay of this endpoint is still running.';
          expect(
            expected.includes(status) || (variant === 'plain' && (customPeriodRule || nationalFormatRule || replayRunningRule)),
            `HTTP ${status}, expected ${expected.join(' or ')}: ${context}\n${JSON.stringify(body).slice(0, 400)}`,
          ).toBe(true);
          if (status === 422 && request.invalid.other.length > 0) {
            // A refused value is named (a header by its name, a file by its index, a JSON body that is not an object as `body`); an upload names its first problem only.
            const named = Object.keys(body?.errors ?? {});
            const refusedNamed = request.invalid.other.some((name) => named.some((field) => field === name || field.startsWith(`${name}.`)));
            expect(refusedNamed, `none of ${request.invalid.other.join(', ')} named in ${named.join(', ')}: ${context}`).toBe(true);
          }
        }),
        { numRuns: Math.round((RUNS[`${method} ${path}`] ?? DEFAULT_RUNS) * SCALE), interruptAfterTimeLimit: SCALE > 1 ? 600_000 : 25_000 },
      );
    },
    SCALE > 1 ? 900_000 : 60_000,
  );
});
