import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex, migrateLatest } from '@logi/adapters';
import { WORK_DIR, formatSizeLabel, type BenchConfig } from './config.js';
import { log, Progress } from './progress.js';
import { analyze, createSeedTables, withSeedSession } from './seed.js';
import { BIG_DIRECTORY, BIG_KEY, CUSTOMERS, MYSQL_SEED, ROUTES, SMALL_DIRECTORY, SMALL_N } from './seed-data.js';

/**
 * The databases of the events part: `logi_bench_events_<size>` with N events
 * in the big directory (and 2,000 in the small one) for the feed, kept
 * between runs by a `bench_events_seed` marker; and the pair of fresh
 * databases the write cost loads invoices into, one with the capture
 * triggers and one without.
 */
export const EVENTS_SEED_FORMAT = 1;
/** Events per INSERT … SELECT statement. */
const CHUNK = 50_000;
/** Seeded events were published over this many days before the seeding. */
const SPREAD_DAYS = 7;

export interface EventFeedDatabase {
  /** `MariaDB 1m events`. */
  label: string;
  /** Events in the big directory. */
  n: number;
  databaseUrl: string;
  dataDir: string;
  directory: string;
  apiKey: string;
  /** API environment. */
  env: Record<string, string>;
  info: { reused: boolean; seededAt: string; loadSeconds: number; bytes: number; avgDataBytes: number };
}

export function eventFeedDatabaseName(n: number): string {
  return `logi_bench_events_${formatSizeLabel(n)}`;
}

/** A feed database of `n` events in the big directory: reused when its marker matches, else dropped and seeded. */
export async function prepareEventFeed(config: BenchConfig, n: number): Promise<EventFeedDatabase> {
  const name = eventFeedDatabaseName(n);
  const databaseUrl = `${config.mariadbUrl}/${name}`;
  const dataDir = path.join(WORK_DIR, `api-${name}`);
  await mkdir(dataDir, { recursive: true });
  const label = `MariaDB ${formatSizeLabel(n)} events`;
  const base = {
    label,
    n,
    databaseUrl,
    dataDir,
    directory: BIG_DIRECTORY,
    apiKey: BIG_KEY,
    // The seeded events are days old; retention must not remove them while they are measured.
    env: { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, EVENTS_RETENTION_DAYS: '36500' },
  };
  if (!config.reseed && (await databaseExists(config, name))) {
    const knex = createKnex({ databaseUrl, dataDir });
    try {
      const marker = await readMarker(knex);
      if (marker && Number(marker.format) === EVENTS_SEED_FORMAT && Number(marker.n) === n && Number(marker.small_n) === SMALL_N) {
        log(`${label}: reusing the seeded database (BENCH_RESEED=1 seeds again)`);
        const ran = await migrateLatest(knex);
        if (ran.length > 0) log(`${label}: migrations ${ran.join(', ')} ran on the reused database`);
        return {
          ...base,
          info: {
            reused: true,
            seededAt: new Date(Number(marker.seeded_at) * 1000).toISOString(),
            loadSeconds: Number(marker.load_seconds),
            ...(await sizes(knex)),
          },
        };
      }
    } finally {
      await knex.destroy();
    }
  }
  await recreateDatabase(config, name, dataDir);
  const knex = createKnex({ databaseUrl, dataDir });
  try {
    const now = Math.floor(Date.now() / 1000);
    const started = Date.now();
    log(`${label}: migrating and seeding ${n.toLocaleString('en-US')} + ${SMALL_N.toLocaleString('en-US')} events`);
    await migrateLatest(knex);
    await createSeedTables(knex, now);
    const progress = new Progress(`${label}: loading`, n + SMALL_N, 'events');
    let done = 0;
    await withSeedSession(knex, MYSQL_SEED, async (run) => {
      for (const part of [
        { directory: BIG_DIRECTORY, offset: 0, count: n },
        { directory: SMALL_DIRECTORY, offset: n, count: SMALL_N },
      ]) {
        for (let from = 1; from <= part.count; from += CHUNK) {
          const to = Math.min(part.count, from + CHUNK - 1);
          await run([eventInsertStatement({ ...part, from, to, now })]);
          done += to - from + 1;
          progress.update(done);
        }
      }
    });
    progress.finish();
    await analyze(knex);
    const loadSeconds = (Date.now() - started) / 1000;
    await knex.schema.createTable('bench_events_seed', (t) => {
      t.integer('format').notNullable();
      t.integer('n').notNullable();
      t.integer('small_n').notNullable();
      t.bigInteger('seeded_at').notNullable();
      t.double('load_seconds').notNullable();
    });
    await knex('bench_events_seed').insert({ format: EVENTS_SEED_FORMAT, n, small_n: SMALL_N, seeded_at: now, load_seconds: loadSeconds });
    log(`${label}: seeded in ${loadSeconds.toFixed(1)} s`);
    return { ...base, info: { reused: false, seededAt: new Date(now * 1000).toISOString(), loadSeconds, ...(await sizes(knex)) } };
  } finally {
    await knex.destroy();
  }
}

async function readMarker(knex: Knex): Promise<Record<string, unknown> | undefined> {
  try {
    if (!(await knex.schema.hasTable('bench_events_seed'))) return undefined;
    return (await knex('bench_events_seed').first()) as Record<string, unknown> | undefined;
  } catch {
    return undefined; // no such database
  }
}

async function sizes(knex: Knex): Promise<{ bytes: number; avgDataBytes: number }> {
  const [rows] = (await knex.raw(
    "SELECT SUM(data_length + index_length) AS bytes FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'events'",
  )) as unknown as [Array<{ bytes: unknown }>];
  // A sample: AVG over a million rows would read them all.
  const [sample] = (await knex.raw('SELECT AVG(LENGTH(data)) AS avg FROM (SELECT data FROM events ORDER BY id LIMIT 2000) e')) as unknown as [
    Array<{ avg: unknown }>,
  ];
  return { bytes: Number(rows[0]?.bytes ?? 0), avgDataBytes: Math.round(Number(sample[0]?.avg ?? 0)) };
}

async function databaseExists(config: BenchConfig, name: string): Promise<boolean> {
  const admin = createKnex({ databaseUrl: `${config.mariadbUrl}/mysql`, dataDir: WORK_DIR });
  try {
    const [rows] = (await admin.raw('SELECT 1 FROM information_schema.schemata WHERE schema_name = ?', [name])) as unknown as [unknown[]];
    return rows.length > 0;
  } finally {
    await admin.destroy();
  }
}

export async function recreateDatabase(config: BenchConfig, name: string, dataDir: string): Promise<void> {
  const admin = createKnex({ databaseUrl: `${config.mariadbUrl}/mysql`, dataDir });
  try {
    await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } finally {
    await admin.destroy();
  }
}

export async function dropDatabase(config: BenchConfig, name: string): Promise<void> {
  const admin = createKnex({ databaseUrl: `${config.mariadbUrl}/mysql`, dataDir: WORK_DIR });
  try {
    await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await admin.destroy();
  }
}

/**
 * Events `offset + from` .. `offset + to` of a directory, as the publisher
 * writes them: `invoice.created` 55 %, `invoice.updated` 38 % (the list item
 * and `previous_attributes`), `invoice.deleted` 4 %, `order.file_attached`
 * 3 %; the list item of an invoice of the seed's customers and routes (about
 * 1 KB), ids in order of `created` over the week before `now`.
 */
export function eventInsertStatement(spec: { directory: string; offset: number; from: number; to: number; now: number }): string {
  const total = spec.offset + spec.to;
  const step = (SPREAD_DAYS * 86_400) / Math.max(1, total);
  const dir = `'${spec.directory.replace(/'/g, "''")}'`;
  const money = (cents: string) => `CAST((${cents}) / 100 AS DECIMAL(14,2))`;
  const tax = '((e.net_cents * c.tax_rate + 50) DIV 100)';
  const gross = `(e.net_cents + ${tax})`;
  const paid = `(CASE WHEN e.paybucket < 65 THEN ${gross} WHEN e.paybucket < 73 THEN ${gross} DIV 2 ELSE 0 END)`;
  const nr = "CONCAT('FV/', MONTH(FROM_UNIXTIME(e.issue)), '/', YEAR(FROM_UNIXTIME(e.issue)), '/', LPAD(e.seq, GREATEST(6, LENGTH(e.seq)), '0'))";
  const orderNr = "CONCAT('ORD/', YEAR(FROM_UNIXTIME(e.issue)), '/', LPAD(e.seq, GREATEST(7, LENGTH(e.seq)), '0'))";
  const status = "CASE WHEN e.paybucket < 65 THEN 'paid' WHEN e.paybucket < 73 THEN 'semipaid' WHEN e.paybucket < 93 THEN 'overdue' ELSE 'issued' END";
  const service = '(e.issue - (e.h % 5) * 86400)';
  const item = [
    `'{"id":', e.id, ',"nr":"', ${nr}, '","type":"', e.itype, '","status":"', ${status}, '","branch_id":', e.branch`,
    `',"issue_date":', e.issue, ',"service_date":', ${service}, ',"payment_term":', e.issue + e.termdays * 86400`,
    `',"payment_date":', CASE WHEN e.paybucket < 73 THEN e.issue + (e.h % 60) * 86400 ELSE 'null' END`,
    `',"customer_name":"', c.name, '","customer_vat":"', c.vat, '","customer_country":"', c.country, '","currency":"', c.currency, '"'`,
    `',"amount_net":', ${money('e.net_cents')}, ',"amount_tax":', ${money(tax)}, ',"amount_gross":', ${money(gross)}`,
    `',"paid":', ${money(paid)}, ',"left_to_pay":', ${money(`${gross} - ${paid}`)}`,
    `',"orders":[{"type":"', ELT(1 + e.h % 4, 'FTL', 'LTL', 'Groupage', 'Express'), '","nr":"', ${orderNr}, '","cmr":"CMR ', 100000 + (e.h * 13) % 900000`,
    `'","tasks":[{"type":"loading","place":"', r.origin, '","date":', ${service} - 86400, '},{"type":"unloading","place":"', r.destination, '","date":', ${service}, '}]'`,
    `',"files":[],"contacts":', c.contacts, '}],"correct_of":null,"added_time":', e.issue + e.h % 7200, '}'`,
  ].join(', ');
  const data =
    `CASE WHEN e.bucket < 55 THEN CONCAT('{"object":', ${item}, '}') ` +
    `WHEN e.bucket < 93 THEN CONCAT('{"object":', ${item}, ',"previous_attributes":{"status":"issued","paid":0,"left_to_pay":', ${money(gross)}, '}}') ` +
    `WHEN e.bucket < 97 THEN CONCAT('{"object":{"id":', e.id, ',"nr":"', ${nr}, '"}}') ` +
    `ELSE CONCAT('{"object":{"id":', e.id, ',"name":"CMR-', e.seq, '.pdf","category_id":1,"order_id":', e.id, '}}') END`;
  const type =
    "CASE WHEN e.bucket < 55 THEN 'invoice.created' WHEN e.bucket < 93 THEN 'invoice.updated' WHEN e.bucket < 97 THEN 'invoice.deleted' ELSE 'order.file_attached' END";
  // A multiplicative hash of seq gives each event its choices (materialized once: derived_merge is off in the seed session).
  const hashed = `SELECT seq, (seq * 2654435761 + ${spec.offset}) % 4294967296 AS h FROM seq_${spec.from}_to_${spec.to}`;
  const chosen =
    `SELECT s.seq, ${spec.offset} + s.seq AS id, FLOOR(${spec.now - SPREAD_DAYS * 86_400} + (${spec.offset} + s.seq) * ${step}) AS created, s.h, ` +
    `s.h % 100 AS bucket, (s.h >> 7) % 100 AS paybucket, (s.h >> 8) % ${CUSTOMERS} AS cust, (s.h >> 4) % ${ROUTES} AS route, ` +
    `(s.h >> 12) % 2000000 + 5000 AS net_cents, ${spec.now - SPREAD_DAYS * 86_400} - ((s.h >> 3) % 1096) * 86400 AS issue, ` +
    `ELT(1 + (s.h >> 14) % 3, 14, 30, 60) AS termdays, 1 + (s.h >> 16) % 5 AS branch, ` +
    `CASE WHEN (s.h >> 20) % 10 < 7 THEN 's' WHEN (s.h >> 20) % 10 < 8 THEN 'c' ELSE 'p' END AS itype FROM (${hashed}) s`;
  return (
    `INSERT INTO events (id, directory, type, created, data) SELECT e.id, ${dir}, ${type}, e.created, ${data} ` +
    `FROM (${chosen}) e JOIN bench_customers c ON c.i = e.cust JOIN bench_routes r ON r.i = e.route`
  );
}
