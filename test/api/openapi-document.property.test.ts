/**
 * The OpenAPI document, driven (issue 17): requests generated from the
 * document the server publishes, for every operation in it, with valid and
 * invalid values of every parameter and body field, and the refusals any
 * request can meet (a control byte in a header, a query over 8 KiB, headers
 * over 64 KiB, no credentials, a wrong method, a body cut short). Every answer must be
 * documented for its operation, with the headers the document lists and a
 * body that fits its schema; and its status must be what the values call
 * for: a value its schema refuses is a 422 (a path id: 404), values their
 * schemas accept are never a 400 or a 422, save the cross-field rules of a
 * `custom` period, which the document states in words.
 * Seeds are random; fast-check prints the seed and the shrunk request on failure.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@logi/adapters';
import { buildOpenApiDocument } from '@logi/api';
import { authHeaders, startTestApi, type TestApi } from '../support/api-harness.js';
import { OpenApiContract, type OpenApiDoc } from '../support/openapi-contract.js';
import { requestArbitrary, type GeneratedRequest, type Hints } from '../support/openapi-requests.js';
import { rawRequest } from '../support/raw-http.js';

/** The operations, read from the document the server builds (the served one is checked to list the same). */
const OPERATIONS = Object.entries(buildOpenApiDocument(loadConfig({})).paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => [method, path] as const));

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
};
/** Valid values of these look something up and may find nothing (404). */
const LOOKUPS = ['nr'];

/** Requests per operation: the list and the lookup take the most parameters; a PDF may need a render. */
const RUNS: Record<string, number> = { '/invoices': 150, '/orders/by-nr': 100, '/orders/file-categories': 30, '/invoices/{invoice_id}/pdf': 50 };
const DEFAULT_RUNS = 60;
/** OPENAPI_PROPERTY_SCALE=20 for a long hunt; the time limit below then stops each operation first. */
const SCALE = Number(process.env.OPENAPI_PROPERTY_SCALE ?? 1);

const VARIANTS = ['plain', 'no-credentials', 'wrong-method', 'control-byte', 'long-query', 'big-headers', 'cut-body'] as const;
type Variant = (typeof VARIANTS)[number];
/** Mostly plain requests; the rest meet one refusal each (`cut-body` only where there is a body: elsewhere it is sent plain). */
const variantArb = fc.oneof({ weight: 10, arbitrary: fc.constant<Variant>('plain') }, { weight: 4, arbitrary: fc.constantFrom<Variant>(...VARIANTS.slice(1)) });
const CONTROL_BYTES = [...Array.from({ length: 32 }, (_, c) => c).filter((c) => c !== 9 && c !== 10 && c !== 13), 0x7f].map((c) => String.fromCharCode(c));
const controlHeaderArb = fc.record({
  name: fc.constantFrom('If-None-Match', 'X-Client-Directory', 'Idempotency-Key', 'X-Probe'),
  value: fc.tuple(fc.stringMatching(/^[\x21-\x7e]{0,6}$/), fc.constantFrom(...CONTROL_BYTES), fc.stringMatching(/^[\x21-\x7e]{0,6}$/)).map((parts) => parts.join('')),
});

let api: TestApi;
let contract: OpenApiContract;
beforeAll(async () => {
  api = await startTestApi({}, { label: 'openapi-property' });
  contract = new OpenApiContract((await (await fetch(`${api.base}/openapi.json`)).json()) as OpenApiDoc);
});
afterAll(async () => {
  await api?.stop();
});

let sequence = 0;
/** A valid Idempotency-Key made unique, so that no two generated uploads share one (that is a 422 of its own). */
function unique(key: string): string {
  const suffix = `-${process.pid}-${(sequence += 1)}`;
  return key.slice(0, 255 - suffix.length) + suffix;
}

async function send(request: GeneratedRequest, variant: Variant, controlHeader: { name: string; value: string }): Promise<Response> {
  const headers: Record<string, string> = { ...authHeaders('baltic'), ...request.headers };
  if (headers['Idempotency-Key'] !== undefined && !request.invalid.other.includes('Idempotency-Key')) headers['Idempotency-Key'] = unique(headers['Idempotency-Key']);
  if (variant === 'control-byte') {
    const { host } = new URL(api.root);
    const lines = Object.entries({ Host: host, ...headers, [controlHeader.name]: controlHeader.value, 'Content-Length': '0', Connection: 'close' });
    return rawRequest(api.root, `${request.method} /v1${request.target} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`);
  }
  if (variant === 'no-credentials') for (const name of Object.keys(authHeaders('baltic'))) delete headers[name];
  if (variant === 'big-headers') headers['X-Padding'] = 'p'.repeat(70 * 1024);
  const target = variant === 'long-query' ? `${request.target}${request.target.includes('?') ? '&' : '?'}padding=${'q'.repeat(8 * 1024)}` : request.target;
  const method = variant === 'wrong-method' ? (request.method === 'GET' ? 'DELETE' : 'GET') : request.method;
  const body = (variant === 'plain' || variant === 'cut-body') && request.body ? request.body : null;
  if (body) headers['Content-Type'] = body.contentType;
  // A body cut short before its closing boundary cannot be read.
  const bytes = body && variant === 'cut-body' ? body.bytes.subarray(0, body.bytes.lastIndexOf('\r\n--')) : body?.bytes;
  return fetch(`${api.base}${target}`, { method, headers, body: bytes });
}

/** The statuses the document allows for this request, from what its values are. */
function expectedStatuses(request: GeneratedRequest, variant: Variant): number[] {
  const refusal: Partial<Record<Variant, number>> = { 'control-byte': 400, 'long-query': 414, 'big-headers': 431, 'no-credentials': 401, 'wrong-method': 405 };
  if (refusal[variant] !== undefined) return [refusal[variant]!];
  if (request.invalid.path.length > 0) return [404];
  const nothingNamed = request.unknownIds.length > 0 || LOOKUPS.some((name) => request.sent[name] !== undefined) ? [404] : [];
  // A body that cannot be read is a 400, unless a value read before it (a header) is refused first.
  if (variant === 'cut-body') return [...nothingNamed, 400, ...(request.invalid.other.length > 0 ? [422] : [])];
  if (request.invalid.other.length > 0) return [...nothingNamed, 422];
  const conditional = request.headers['If-None-Match'] !== undefined ? [304] : [];
  return [...nothingNamed, ...(request.method === 'POST' ? [201] : [200, ...conditional])];
}

describe('requests generated from the OpenAPI document', () => {
  it('when the served document is read, then it lists the operations this test drives', () => {
    const served = Object.entries(contract.doc.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`));
    expect(served.sort()).toEqual(OPERATIONS.map(([method, path]) => `${method} ${path}`).sort());
  });

  it.each(OPERATIONS)('when %s %s gets generated values of every parameter, valid and invalid, then every answer is documented and fits, with the status its values call for', async (method, path) => {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(contract.doc, method, path, HINTS), variantArb, controlHeaderArb, async (request, drawn, controlHeader) => {
        const variant = drawn === 'cut-body' && !request.body ? 'plain' : drawn;
        const context = JSON.stringify({ variant, method: request.method, target: request.target.slice(0, 300), headers: request.headers, sent: request.sent, invalid: request.invalid, controlHeader: variant === 'control-byte' ? controlHeader : undefined });
        const response = await send(request, variant, controlHeader);
        const status = response.status;
        const body = (await contract.expectDocumented(response, method, path)) as { errors?: Record<string, string[]> } | null;
        const expected = expectedStatuses(request, variant);
        // A `custom` period needs one of its dates, the first not after the second: rules between values, stated in words.
        const customPeriodRule = status === 422 && request.sent.period === 'custom' && Object.keys(body?.errors ?? {}).every((field) => field === 'date_from' || field === 'date_to');
        expect(expected.includes(status) || (variant === 'plain' && customPeriodRule), `HTTP ${status}, expected ${expected.join(' or ')}: ${context}\n${JSON.stringify(body).slice(0, 400)}`).toBe(true);
        if (status === 422 && request.invalid.other.length > 0) {
          // A refused value is named (a header by its name, a file by its index); an upload names its first problem only.
          const named = Object.keys(body?.errors ?? {});
          const refusedNamed = request.invalid.other.some((name) => named.some((field) => field === name || field.startsWith(`${name}.`)));
          expect(refusedNamed, `none of ${request.invalid.other.join(', ')} named in ${named.join(', ')}: ${context}`).toBe(true);
        }
      }),
      { numRuns: Math.round((RUNS[path] ?? DEFAULT_RUNS) * SCALE), interruptAfterTimeLimit: SCALE > 1 ? 600_000 : 25_000 },
    );
  }, SCALE > 1 ? 900_000 : 60_000);
});
