import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthenticateClientUseCase, ListInvoicesUseCase } from '@logi/domain';
import { unavailableOnOutage } from '@logi/adapters';
import { createApp } from '@logi/api';
import { RateLimiter } from '../../packages/api/src/middleware/rate-limiter.js';
import { pdfContentDisposition } from '../../packages/api/src/http/content-disposition.js';
import { envelopeOf } from '../support/api-harness.js';

/**
 * Unexpected failures, driven through the real app with a use case whose
 * repository fails the way a broken dependency would, the repository wrapped
 * as the composition roots wrap every adapter they bind.
 */
let server: http.Server;
let base: string;
let failure: Error;
let bypassPort = false;
const repository = unavailableOnOutage(
  {
    async list(): Promise<never> {
      throw failure;
    },
  },
  'database',
);

beforeAll(async () => {
  const client = { id: 1, directory: 'd', name: 'd', company: { name: '', address: '', vat: '', bankAccount: '', bankName: '' } };
  const unused = {} as never;
  const app = createApp({
    logger: pino({ level: 'silent' }),
    authenticate: { execute: async () => ({ client, key: { id: 1, scopes: ['read', 'write', 'webhooks'] } }) } as unknown as AuthenticateClientUseCase,
    limiter: new RateLimiter({ max: 1000, windowSeconds: 60, redis: null, logger: pino({ level: 'silent' }) }),
    listInvoices: { execute: () => (bypassPort ? Promise.reject(failure) : repository.list()) } as unknown as ListInvoicesUseCase,
    listFileCategories: unused,
    findOrderByNr: unused,
    attachFiles: unused,
    orderFiles: unused,
    receiver: unused,
    downloadInvoicePdf: unused,
    downloadEInvoice: unused,
    listEvents: unused,
    manageWebhooks: unused,
    manageExports: unused,
    exportStorage: unused,
    idempotency: unused,
    secretCipher: unused,
  });
  const handle = app.callback();
  // Koa's handler answers its own failures (ctx.onerror): its promise never rejects.
  server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('unexpected errors', () => {
  it('when a use case throws something unexpected, then 500 with a generic message and no internals', async () => {
    failure = new Error('SQLITE_ERROR: no such column secret_column in /srv/app/data/app.sqlite');
    const response = await fetch(`${base}/invoices`);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ status: 500, message: 'Server Error', data: null });
    expect(text).not.toMatch(/secret|sqlite|srv/i);
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('when the database pool gives up, then 503 with Retry-After rather than 500', async () => {
    failure = Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' });
    const response = await fetch(`${base}/invoices`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await envelopeOf(response)).toEqual({ status: 503, message: 'Service Unavailable', data: null });
  });

  it('when a connection is refused, then 503', async () => {
    failure = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:3306'), { code: 'ECONNREFUSED' });
    const response = await fetch(`${base}/invoices`);
    expect(response.status).toBe(503);
    expect(await response.text()).not.toContain('10.0.0.1');
  });

  const coded = (code: string, message = `${code}: temporary`) => Object.assign(new Error(message), { code });

  it('when a transient failure reaches the middleware without passing a port, then 500: the middleware maps domain errors only', async () => {
    failure = coded('ECONNREFUSED');
    bypassPort = true;
    try {
      const response = await fetch(`${base}/invoices`);
      expect(response.status).toBe(500);
      expect(response.headers.get('retry-after')).toBeNull();
    } finally {
      bypassPort = false;
    }
  });

  it.each([
    ['MariaDB going down', coded('ER_SERVER_SHUTDOWN', 'Server shutdown in progress')],
    ['a lock wait timeout', coded('ER_LOCK_WAIT_TIMEOUT', 'Lock wait timeout exceeded; try restarting transaction')],
    ['a deadlock', coded('ER_LOCK_DEADLOCK', 'Deadlock found when trying to get lock; try restarting transaction')],
    ['a DNS lookup that failed for now', coded('EAI_AGAIN', 'getaddrinfo EAI_AGAIN mariadb')],
    ['an unreachable network', coded('ENETUNREACH', 'connect ENETUNREACH 10.0.0.1:3306')],
    ['an unreachable host', coded('EHOSTUNREACH', 'connect EHOSTUNREACH 10.0.0.1:3306')],
    ['an aborted connection', coded('ECONNABORTED')],
    ['SQLite busy', coded('SQLITE_BUSY', 'SQLITE_BUSY: database is locked')],
    ['SQLite busy (extended code)', coded('SQLITE_BUSY_SNAPSHOT')],
    ['SQLite busy on recovery (extended code)', coded('SQLITE_BUSY_RECOVERY')],
    ['SQLite locked', coded('SQLITE_LOCKED')],
    ['SQLite locked (extended code)', coded('SQLITE_LOCKED_SHAREDCACHE')],
    [
      'a mysql2 connection already closed (fatal, no code)',
      Object.assign(new Error("Can't add new command when connection is in closed state"), { fatal: true }),
    ],
    ['a fatal mysql2 protocol error', Object.assign(coded('PROTOCOL_SEQUENCE_TIMEOUT', 'Query inactivity timeout'), { fatal: true })],
  ])('when the database fails with %s, then 503 with Retry-After rather than 500', async (_what, error) => {
    failure = error;
    const response = await fetch(`${base}/invoices`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await envelopeOf(response)).toEqual({ status: 503, message: 'Service Unavailable', data: null });
  });

  it.each([
    ['a constraint violation', coded('SQLITE_CONSTRAINT_UNIQUE')],
    ['a code that only starts like a busy one', coded('SQLITE_BUSYNESS')],
    ['a syntax error', coded('ER_PARSE_ERROR')],
    ['an error marked fatal: false', Object.assign(coded('ER_BAD_FIELD_ERROR'), { fatal: false })],
    ['an error whose fatal mark is not a boolean', Object.assign(new Error('odd'), { fatal: 'yes' })],
  ])('when the database fails with %s, then 500, not 503', async (_what, error) => {
    failure = error;
    const response = await fetch(`${base}/invoices`);
    expect(response.status).toBe(500);
    expect(response.headers.get('retry-after')).toBeNull();
  });
});

describe('PDF download names', () => {
  it.each([
    ['FV/11/2026/0007', 'attachment; filename="FV_11_2026_0007.pdf"'],
    ['INV-2026.07', 'attachment; filename="INV-2026.07.pdf"'],
    ['A "quoted" ;nr', 'attachment; filename="A__quoted___nr.pdf"'],
    ['FV/ŁÓDŹ/1', `attachment; filename="FV___D__1.pdf"; filename*=UTF-8''FV_%C5%81%C3%93D%C5%B9_1.pdf`],
    ['Fatura İş/7', `attachment; filename="Fatura____7.pdf"; filename*=UTF-8''Fatura_%C4%B0%C5%9F_7.pdf`],
  ])('when the invoice number is %j, then %s', (nr, header) => {
    expect(pdfContentDisposition(nr)).toBe(header);
  });
});
