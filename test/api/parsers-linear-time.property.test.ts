/**
 * Issue 35: every parser of a request header or a query value reads 64 KiB of hostile text in
 * linear time. `Range: bytes=0-` and 60,000 spaces held the event loop 3 s per request, and no key
 * was needed to send it. Each parser is called directly (no HTTP) on the known worst shapes and on
 * shapes fast-check makes (runs of spaces, tabs, digits, commas, `=`, `-`, quotes, backslashes,
 * unicode, repeated separators), and its time on 64 KiB is compared with its time on 16 KiB of the
 * same shape (test/support/hostile-input/linear-time.ts). The old Range expression is kept here as
 * the control that the same check must call super-linear. The worst cases through HTTP, in both
 * profiles: hostile-headers.test.ts. No server here, so the production profile skips this file.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import path from 'node:path';
import fc from 'fast-check';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@logi/adapters';
import {
  DomainError,
  EXPORT_FILTER_PARAMS,
  eInvoiceQuerySchema,
  idempotencyKeyErrors,
  invoicePdfQuerySchema,
  LIST_INVOICES_PARAMS,
  listDeliveriesQuerySchema,
  listEventsQuerySchema,
  parseCategoryId,
  parseEInvoiceQuery,
  parseExportRequest,
  parseInvoicePdfQuery,
  parseListDeliveriesQuery,
  parseListEventsQuery,
  parseListInvoicesQuery,
  parseOrderNrQuery,
  readCredentials,
} from '@logi/domain';
import { ifNoneMatchHits } from '../../packages/api/src/http/conditional.js';
import { HttpError } from '../../packages/api/src/http/http-error.js';
import { parsePathId, queryPairs } from '../../packages/api/src/http/path-id.js';
import { parseRange } from '../../packages/api/src/http/ranged-download.js';
import { requestContext } from '../../packages/api/src/middleware/request-context.middleware.js';
import { basicAuth } from '../../packages/api/src/ops/dashboard/basic-auth.middleware.js';
import { confirmedGrowthOf, growthOf, KNOWN_WORST, LARGE, shapeArb, textOf, type Growth, type Shape } from '../support/hostile-input/linear-time.js';

/** busboy as the upload receiver gets it (through @koa/multer and multer): it reads the multipart boundary. */
const busboy = (() => {
  const from = (module: string, parent: string) => createRequire(parent).resolve(module);
  const multer = from('multer', from('@koa/multer', path.resolve(import.meta.dirname, '../../packages/api/package.json')));
  return createRequire(multer)('busboy') as (config: { headers: Record<string, string> }) => unknown;
})();

/** A real Koa context over a request that never touches a socket, as the API's app builds one (behind one trusted proxy). */
const app = new Koa({ proxy: true, maxIpsCount: 1 });
function contextWith(headers: Record<string, string>): Koa.Context {
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  req.url = '/v1/invoices';
  req.headers = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return app.createContext(req, new ServerResponse(req));
}

/** A refusal is an answer: the API's own errors (422, 401, 400...) are what hostile text should get. */
function answered(run: () => unknown): void {
  try {
    const result = run();
    if (result instanceof Promise) result.catch(refusal);
  } catch (error) {
    refusal(error);
  }
}
function refusal(error: unknown): void {
  if (!(error instanceof DomainError || error instanceof HttpError)) throw error;
}

const logger = createLogger({ level: 'silent' });
const stampRequest = requestContext(logger);
const dashboardGate = basicAuth({ user: 'ops', password: 'secret' }, 'Queues');
const nothing = async () => undefined;
const LIST_CONTEXT = { directory: 'baltic-haulage', now: new Date('2026-04-15T10:00:00Z'), timeZone: 'Europe/Warsaw' };

interface Target {
  name: string;
  /** What a well-formed value starts with, so that generated shapes reach past the first check. */
  prefixes: string[];
  parse: (text: string) => unknown;
}

const headerTargets: Target[] = [
  { name: 'Range', prefixes: ['bytes=', 'bytes=0-', 'bytes=-'], parse: (text) => parseRange(text, 1_000_000) },
  { name: 'If-None-Match', prefixes: ['W/"', '"', '*'], parse: (text) => [ifNoneMatchHits(text, '"abc"'), ifNoneMatchHits(text, 'W/"abc"')] },
  {
    name: 'Authorization (Bearer) and X-Client-Directory',
    prefixes: ['Bearer ', 'bearer\t'],
    parse: (text) => [readCredentials({ authorization: text, directory: 'baltic-haulage' }), readCredentials({ authorization: 'Bearer key', directory: text })],
  },
  {
    name: 'Authorization (Basic, the queue dashboard)',
    prefixes: ['Basic ', 'basic  '],
    parse: (text) => answered(() => dashboardGate(contextWith({ Authorization: text }), nothing)),
  },
  { name: 'X-Request-Id', prefixes: ['req-'], parse: (text) => answered(() => stampRequest(contextWith({ 'X-Request-Id': text }), nothing)) },
  { name: 'Idempotency-Key', prefixes: ['key-'], parse: (text) => idempotencyKeyErrors(text) },
  {
    name: 'Content-Type (JSON bodies and the multipart check)',
    prefixes: ['application/json', 'application/json; charset=', 'multipart/form-data;'],
    parse: (text) => {
      const ctx = contextWith({ 'Content-Type': text, 'Content-Length': '1' });
      return [ctx.is('application/json'), ctx.is('multipart')];
    },
  },
  {
    name: 'Content-Type (the multipart boundary, busboy)',
    prefixes: ['multipart/form-data; boundary=', 'multipart/form-data; boundary="'],
    parse: (text) => {
      try {
        busboy({ headers: { 'content-type': text } });
      } catch (error) {
        // busboy refuses a malformed type or a missing boundary with a plain Error: the receiver's 400.
        if (!(error instanceof Error)) throw error;
      }
    },
  },
  {
    name: 'X-Forwarded-For, X-Forwarded-Host, X-Forwarded-Proto (behind a trusted proxy: rate limits, file links)',
    prefixes: ['10.0.0.1, ', 'example.com:'],
    parse: (text) => {
      const ctx = contextWith({ 'X-Forwarded-For': text, 'X-Forwarded-Host': text, 'X-Forwarded-Proto': text, Host: text });
      return [ctx.ip, ctx.host, ctx.protocol];
    },
  },
  { name: 'path ids', prefixes: ['1'], parse: (text) => parsePathId(text) },
  { name: 'category_id (multipart field)', prefixes: ['-', '1'], parse: (text) => parseCategoryId(text) },
];

/** Each query parser on a whole hostile query string, and on a hostile value of each of its parameters. */
const queryParsers: Array<{ name: string; params: readonly string[]; parse: (pairs: Array<[string, string]>) => unknown }> = [
  { name: 'GET /v1/invoices', params: LIST_INVOICES_PARAMS, parse: (pairs) => parseListInvoicesQuery(pairs, LIST_CONTEXT) },
  { name: 'GET /v1/events', params: Object.keys(listEventsQuerySchema.shape), parse: (pairs) => parseListEventsQuery(pairs) },
  { name: 'GET /v1/invoices/{id}/e-invoice', params: Object.keys(eInvoiceQuerySchema.shape), parse: (pairs) => parseEInvoiceQuery(pairs) },
  { name: 'GET /v1/invoices/{id}/pdf', params: Object.keys(invoicePdfQuerySchema.shape), parse: (pairs) => parseInvoicePdfQuery(pairs) },
  { name: 'GET /v1/orders/by-nr', params: ['nr'], parse: (pairs) => parseOrderNrQuery(pairs) },
  {
    name: 'GET /v1/webhook-endpoints/{id}/deliveries',
    params: Object.keys(listDeliveriesQuerySchema.shape),
    parse: (pairs) => parseListDeliveriesQuery(pairs),
  },
  {
    name: 'POST /v1/exports filters',
    params: EXPORT_FILTER_PARAMS,
    parse: (pairs) => parseExportRequest({ filters: Object.fromEntries(pairs.filter(([name]) => EXPORT_FILTER_PARAMS.includes(name))) }, LIST_CONTEXT),
  },
];

const queryTargets: Target[] = queryParsers.flatMap(({ name, params, parse }) => [
  { name: `${name}: the query string`, prefixes: params.map((param) => `${param}=`), parse: (text: string) => answered(() => parse(queryPairs(text))) },
  ...params.map((param) => ({
    name: `${name}: ${param}`,
    prefixes: ['2026-04-01', 'custom', 's,c', '1', 'issued, paid'],
    parse: (text: string) => answered(() => parse([[param, text]])),
  })),
]);

const TARGETS = [...headerTargets, ...queryTargets];

function describeGrowth(target: string, shape: Shape, growth: Growth): string {
  const show = (text: string) => JSON.stringify(text.length > 24 ? `${text.slice(0, 24)}…` : text);
  return `${target} on ${show(shape.prefix)} + ${show(shape.unit)}… + ${show(shape.suffix)}: ${growth.smallMs.toFixed(2)} ms on 16 KiB, ${growth.largeMs.toFixed(2)} ms on 64 KiB (x${growth.ratio.toFixed(1)})`;
}

describe('the linear-time check', () => {
  // The Range expression before issue 35, kept as the control: the check must call it super-linear.
  // eslint-disable-next-line regexp/no-super-linear-backtracking -- the planted quadratic expression the check must catch
  const OLD_RANGE = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i;

  it('when the old Range expression reads bytes=0- and a run of spaces, then the check finds it super-linear; the new parser, linear', () => {
    const shape = KNOWN_WORST[0]!;
    expect(textOf(shape, LARGE)).toHaveLength(LARGE);
    const old = growthOf((text) => OLD_RANGE.exec(text), shape);
    // Seconds on 64 KiB, about 16 times its time on 16 KiB (the message shows both).
    expect(old.linear, describeGrowth('the old Range expression', shape, old)).toBe(false);
    const current = confirmedGrowthOf((text) => parseRange(text, 1_000_000), shape);
    expect(current.linear, describeGrowth('parseRange', shape, current)).toBe(true);
  }, 120_000);
});

describe('every header and query parser on 64 KiB of hostile text', () => {
  it.each(TARGETS.map((target) => [target.name, target] as const))('when %s reads the known worst shapes, then in linear time', (_name, target) => {
    const slow: string[] = [];
    for (const shape of KNOWN_WORST) {
      const growth = confirmedGrowthOf(target.parse, shape);
      if (!growth.linear) slow.push(describeGrowth(target.name, shape, growth));
    }
    expect(slow).toEqual([]);
  });

  it.each(TARGETS.map((target) => [target.name, target] as const))('when %s reads generated hostile shapes, then in linear time', (_name, target) => {
    fc.assert(
      fc.property(shapeArb(target.prefixes), (shape) => {
        const growth = confirmedGrowthOf(target.parse, shape);
        expect(growth.linear, describeGrowth(target.name, shape, growth)).toBe(true);
      }),
      { numRuns: 12 },
    );
  });
});
