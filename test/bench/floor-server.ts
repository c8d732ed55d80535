/**
 * The floor of the throughput comparisons: what serving the API's default
 * invoice page, an exact by-nr lookup and a page of the events feed costs
 * with nothing in between —
 * node:http, the same driver (mysql2 or better-sqlite3, loaded from the
 * adapters package), the same SQL the API runs for them (the client's row
 * by directory, which the API reads on every request to check the key, so
 * that a rotated key stops working at once; then the kept count for the
 * total, ids from the sort index, the rows and their order rows, or the
 * exact nr; for the feed the directory's retention mark, then the page's
 * rows from the `(directory, id)` index, one more than asked for has_more),
 * and JSON of the same shape. No key hashing, validation,
 * logging, rate limiting or framework.
 *
 * Run as a child process of the benchmark (like the API), so that server and
 * load generator do not share one event loop:
 *   FLOOR_DATABASE_URL=mysql://… | FLOOR_SQLITE_FILE=…/app.sqlite
 *   FLOOR_DIRECTORY=bench-big FLOOR_PORT=… node --import tsx test/bench/floor-server.ts
 * It prints one line `listening <port>` when ready.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { foldText, textSortKey } from '@logi/adapters';
import { BIG_KEY, SMALL_DIRECTORY, SMALL_KEY } from './seed-data.js';

const require = createRequire(path.resolve(import.meta.dirname, '../../packages/adapters/package.json'));

const INVOICE_COLUMNS = [
  'id',
  'directory',
  'nr',
  'type',
  'status',
  'branch_id',
  'issue_date',
  'service_date',
  'payment_term',
  'payment_date',
  'customer_name',
  'customer_vat',
  'customer_country',
  'currency',
  'amount_net',
  'amount_tax',
  'amount_gross',
  'paid',
  'left_to_pay',
  'added_time',
];
const PER_PAGE = 250;

type Row = Record<string, unknown>;

interface Database {
  /** Rows of one statement; `?` placeholders. */
  query(sql: string, bindings: unknown[]): Promise<Row[]>;
  hasTable(name: string): Promise<boolean>;
}

interface MysqlPool {
  query(sql: string, values: unknown[], callback: (error: Error | null, rows: Row[]) => void): void;
}

function mysqlDatabase(url: string): Database {
  const mysql = require('mysql2') as { createPool(options: Record<string, unknown>): MysqlPool };
  const parsed = new URL(url);
  const pool = mysql.createPool({
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: parsed.pathname.replace(/^\//, ''),
    charset: 'utf8mb4',
    timezone: 'Z',
    connectionLimit: 10,
  });
  const query = (sql: string, bindings: unknown[]) =>
    new Promise<Row[]>((resolve, reject) => pool.query(sql, bindings, (error, rows) => (error ? reject(error) : resolve(rows))));
  return {
    query,
    hasTable: async (name) => (await query('SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?', [name])).length > 0,
  };
}

interface SqliteDatabase {
  prepare(sql: string): { all(...bindings: unknown[]): Row[] };
  function(name: string, options: Record<string, unknown>, fn: (value: unknown) => unknown): void;
  pragma(text: string): unknown;
}

function sqliteDatabase(file: string): Database {
  const Sqlite = require('better-sqlite3') as new (file: string, options: Record<string, unknown>) => SqliteDatabase;
  const db = new Sqlite(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  // The schema's expression indexes name these functions, as createKnex registers them.
  db.function('ufold', { deterministic: true }, (value) => (value == null ? null : foldText(String(value))));
  db.function('usortkey', { deterministic: true }, (value) => (value == null ? null : textSortKey(String(value))));
  return {
    query: async (sql, bindings) => db.prepare(sql).all(...bindings),
    hasTable: async (name) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").all(name).length > 0,
  };
}

const databaseUrl = process.env.FLOOR_DATABASE_URL;
const sqliteFile = process.env.FLOOR_SQLITE_FILE;
const directory = process.env.FLOOR_DIRECTORY ?? 'bench-big';
const db = databaseUrl ? mysqlDatabase(databaseUrl) : sqliteDatabase(sqliteFile ?? '');
const keptCounts = await db.hasTable('invoice_counts');
let countedOnce: number | null = null;
if (!keptCounts) {
  // Without kept counts the floor counts once at start (cheaper than any API could be).
  countedOnce = Number((await db.query('SELECT COUNT(*) AS n FROM invoices WHERE directory = ?', [directory]))[0]?.n ?? 0);
  process.stderr.write('floor: no invoice_counts table; the total is counted once at start\n');
}

const number = (value: unknown): number => (typeof value === 'number' ? value : Number(value));
const nullableNumber = (value: unknown): number | null => (value === null || value === undefined ? null : number(value));
const jsonArray = (value: unknown): unknown[] => (typeof value === 'string' ? (JSON.parse(value) as unknown[]) : Array.isArray(value) ? value : []);

async function invoicePage(page: number): Promise<unknown> {
  const totalRow = keptCounts ? (await db.query('SELECT SUM(n) AS total FROM invoice_counts WHERE directory = ?', [directory]))[0] : { total: countedOnce };
  const total = number(totalRow?.total ?? 0);
  const ids = (
    await db.query('SELECT i.id FROM invoices i WHERE i.directory = ? ORDER BY i.issue_date DESC, i.id DESC LIMIT ? OFFSET ?', [
      directory,
      PER_PAGE,
      (page - 1) * PER_PAGE,
    ])
  ).map((row) => number(row.id));
  const inList = ids.length ? ids.join(', ') : 'NULL';
  const [rows, orderRows] = await Promise.all([
    db.query(
      `SELECT ${INVOICE_COLUMNS.map((c) => `i.${c}`).join(', ')}, ci.id AS correct_of_ref_id, ci.nr AS correct_of_nr FROM invoices i ` +
        `LEFT JOIN invoices ci ON ci.id = i.correct_of_id AND ci.directory = i.directory WHERE i.id IN (${inList})`,
      [],
    ),
    db.query(
      `SELECT invoice_id, position, type, nr, cmr, tasks, files, contacts FROM invoice_orders WHERE invoice_id IN (${inList}) ORDER BY invoice_id, position`,
      [],
    ),
  ]);
  const orders = new Map<number, unknown[]>();
  for (const row of orderRows) {
    const id = number(row.invoice_id);
    const list = orders.get(id) ?? [];
    list.push({ type: row.type, nr: row.nr, cmr: row.cmr, tasks: jsonArray(row.tasks), files: jsonArray(row.files), contacts: jsonArray(row.contacts) });
    orders.set(id, list);
  }
  const byId = new Map(rows.map((row) => [number(row.id), row]));
  const invoices = ids.flatMap((id) => {
    const row = byId.get(id);
    if (!row) return [];
    return [
      {
        id,
        nr: row.nr,
        type: row.type,
        status: row.status,
        branch_id: number(row.branch_id),
        issue_date: number(row.issue_date),
        service_date: number(row.service_date),
        payment_term: number(row.payment_term),
        payment_date: nullableNumber(row.payment_date),
        customer_name: row.customer_name,
        customer_vat: row.customer_vat,
        customer_country: row.customer_country,
        currency: row.currency,
        amount_net: number(row.amount_net),
        amount_tax: number(row.amount_tax),
        amount_gross: number(row.amount_gross),
        paid: number(row.paid),
        left_to_pay: number(row.left_to_pay),
        orders: orders.get(id) ?? [],
        correct_of: row.correct_of_ref_id == null ? null : { id: number(row.correct_of_ref_id), nr: row.correct_of_nr },
        added_time: number(row.added_time),
      },
    ];
  });
  return { invoices, pagination: { page, per_page: PER_PAGE, total, total_pages: Math.ceil(total / PER_PAGE) } };
}

async function orderByNr(nr: string): Promise<unknown> {
  const row = (await db.query('SELECT id, nr, ownnr FROM orders WHERE directory = ? AND nr = ? ORDER BY id LIMIT 1', [directory, nr]))[0];
  return row ? { id: number(row.id), nr: row.nr, ownnr: row.ownnr } : null;
}

/** GET /v1/events?after=&limit= (no types, no wait): the statements ListEventsUseCase runs through KnexEventFeed. */
async function eventsPage(after: number, limit: number): Promise<unknown> {
  const retention = (await db.query('SELECT removed_through FROM event_retention WHERE directory = ? LIMIT 1', [directory]))[0];
  if (retention && number(retention.removed_through) > after) return null;
  const rows = await db.query('SELECT id, type, created, data FROM events WHERE directory = ? AND id > ? ORDER BY id LIMIT ?', [directory, after, limit + 1]);
  const events = rows.slice(0, limit).map((row) => {
    const data = JSON.parse(String(row.data)) as { object: unknown; previous_attributes?: unknown };
    return {
      id: number(row.id),
      type: row.type,
      created: number(row.created),
      data: { object: data.object, ...(data.previous_attributes === undefined ? {} : { previous_attributes: data.previous_attributes }) },
    };
  });
  return { events, has_more: rows.length > limit, next_after: events.at(-1)?.id ?? after };
}

function send(res: http.ServerResponse, status: number, message: string, data: unknown): void {
  const body = JSON.stringify({ status, message, data });
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** The key the benchmark calls with, as the API looks it up: by its hash and the directory (migration 017). */
const keyHash = createHash('sha256')
  .update(directory === SMALL_DIRECTORY ? SMALL_KEY : BIG_KEY, 'utf8')
  .digest('hex');

/** The row the API's credentials check reads: the key joined to its client (the hash is not compared again here). */
async function clientRow(): Promise<Row | undefined> {
  return (
    await db.query(
      'SELECT k.id AS key_id, k.scopes, k.expires_at, k.revoked_at, k.last_used_at, c.id, c.directory, c.name, c.company_name, c.company_address, c.company_vat, ' +
        'c.company_bank_account, c.company_bank_name FROM api_keys k JOIN clients c ON c.directory = k.directory WHERE k.key_hash = ? AND k.directory = ? LIMIT 1',
      [keyHash, directory],
    )
  )[0];
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://floor');
  const work = clientRow().then(() =>
    url.pathname === '/v1/invoices'
      ? invoicePage(Number(url.searchParams.get('page') ?? 1)).then((data) => send(res, 200, 'OK', data))
      : url.pathname === '/v1/orders/by-nr'
        ? orderByNr(url.searchParams.get('nr') ?? '').then((data) => (data ? send(res, 200, 'OK', data) : send(res, 404, 'Order not found.', null)))
        : url.pathname === '/v1/events'
          ? eventsPage(Number(url.searchParams.get('after') ?? 0), Number(url.searchParams.get('limit') ?? 100)).then((data) =>
              data ? send(res, 200, 'OK', data) : send(res, 410, 'Gone', null),
            )
          : Promise.resolve(send(res, 404, 'Not found', null)),
  );
  work.catch((error: unknown) => send(res, 500, String(error), null));
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.FLOOR_PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
