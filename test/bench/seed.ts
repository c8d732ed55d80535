import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { databaseName, WORK_DIR, type BenchConfig, type Size } from './config.js';
import { log, Progress } from './progress.js';
import { analyze, KEEP_DERIVED_DATA, publishCapturedChanges, reindex, type ReindexStatus } from './seed-upkeep.js';
import {
  BIG_DIRECTORY,
  BIG_KEY,
  chunkStatements,
  customerRows,
  MYSQL_SEED,
  routeRows,
  SEED_FORMAT,
  SMALL_DIRECTORY,
  SMALL_KEY,
  SMALL_N,
  SQLITE_SEED,
  type SeedDialect,
} from './seed-data.js';

export { analyze, type ReindexStatus } from './seed-upkeep.js';

export interface SeedInfo {
  reused: boolean;
  /** When the rows were loaded (ISO). */
  seededAt: string;
  /** Seconds: INSERT … SELECT of every row, ANALYZE included. */
  loadSeconds: number;
  reindexSeconds: number | null;
  reindexStatus: ReindexStatus;
  /** Data and indexes on disk. */
  bytes: number;
  /** Migrations applied to the database (names). */
  migrations: string[];
}

/** A seeded database the API can be pointed at. */
export interface BenchDatabase {
  /** `MariaDB 1m`, `SQLite 100k`. */
  label: string;
  engine: 'mariadb' | 'sqlite';
  size: Size;
  /** API environment: DATABASE_URL (MariaDB) or DATA_DIR (SQLite). */
  env: Record<string, string>;
  databaseUrl: string | null;
  dataDir: string;
  directory: string;
  apiKey: string;
  info: SeedInfo;
}

const HASHER = new Sha256ApiKeyHasher();

/** MariaDB database of one size: reused when its marker matches, else dropped and seeded. */
export async function prepareMariadb(config: BenchConfig, size: Size, name = databaseName(size), options: { fresh?: boolean } = {}): Promise<BenchDatabase> {
  const databaseUrl = `${config.mariadbUrl}/${name}`;
  const dataDir = path.join(WORK_DIR, `api-${name}`);
  await mkdir(dataDir, { recursive: true });
  const base: Omit<BenchDatabase, 'info'> = {
    label: `MariaDB ${size.label}`,
    engine: 'mariadb',
    size,
    env: { DATABASE_URL: databaseUrl, DATA_DIR: dataDir },
    databaseUrl,
    dataDir,
    directory: BIG_DIRECTORY,
    apiKey: BIG_KEY,
  };
  if (!config.reseed && !options.fresh) {
    const reused = await reuse(config, base, () => createKnex({ databaseUrl, dataDir }));
    if (reused) return reused;
  }
  const admin = createKnex({ databaseUrl: `${config.mariadbUrl}/mysql`, dataDir });
  try {
    await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } finally {
    await admin.destroy();
  }
  const knex = createKnex({ databaseUrl, dataDir });
  try {
    return { ...base, info: await seed(config, base, knex, MYSQL_SEED) };
  } finally {
    await knex.destroy();
  }
}

/** The embedded profile: a SQLite file under .tmp/bench/sqlite-<size>. */
export async function prepareSqlite(config: BenchConfig, size: Size): Promise<BenchDatabase> {
  const dataDir = path.join(WORK_DIR, `sqlite-${size.label}`);
  const base: Omit<BenchDatabase, 'info'> = {
    label: `SQLite ${size.label}`,
    engine: 'sqlite',
    size,
    env: { DATA_DIR: dataDir },
    databaseUrl: null,
    dataDir,
    directory: BIG_DIRECTORY,
    apiKey: BIG_KEY,
  };
  if (!config.reseed) {
    let exists = false;
    try {
      exists = (await stat(path.join(dataDir, 'app.sqlite'))).isFile();
    } catch {
      // not seeded yet
    }
    if (exists) {
      const reused = await reuse(config, base, () => createKnex({ databaseUrl: null, dataDir }));
      if (reused) return reused;
    }
  }
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(dataDir, { recursive: true });
  const knex = createKnex({ databaseUrl: null, dataDir });
  try {
    return { ...base, info: await seed(config, base, knex, SQLITE_SEED) };
  } finally {
    await knex.destroy();
  }
}

interface MarkerRow {
  format: number;
  n: number;
  small_n: number;
  seeded_at: number;
  load_seconds: number;
  reindex_seconds: number | null;
  reindex_status: string;
}

async function reuse(config: BenchConfig, base: Omit<BenchDatabase, 'info'>, open: () => Knex): Promise<BenchDatabase | null> {
  let knex: Knex;
  try {
    knex = open();
  } catch {
    return null;
  }
  try {
    let marker: MarkerRow | undefined;
    try {
      if (!(await knex.schema.hasTable('bench_seed'))) return null;
      marker = (await knex('bench_seed').first()) as MarkerRow | undefined;
    } catch {
      return null; // no such database
    }
    if (!marker || Number(marker.format) !== SEED_FORMAT || Number(marker.n) !== base.size.n || Number(marker.small_n) !== SMALL_N) return null;
    log(`${base.label}: reusing the seeded database (seed format ${SEED_FORMAT}, ${base.size.n.toLocaleString('en-US')} invoices; BENCH_RESEED=1 seeds again)`);
    const ran = await migrateLatest(knex);
    let reindexStatus = marker.reindex_status as ReindexStatus;
    let reindexSeconds = marker.reindex_seconds === null ? null : Number(marker.reindex_seconds);
    const rebuilds = ran.filter((name) => !KEEP_DERIVED_DATA.has(name));
    if (ran.length > 0) await analyze(knex);
    if (rebuilds.length > 0 || reindexStatus !== 'ok') {
      if (rebuilds.length > 0) log(`${base.label}: migrations ${rebuilds.join(', ')} ran on the reused database; rebuilding the derived data`);
      const result = await reindex(base, config);
      reindexStatus = result.status;
      reindexSeconds = result.seconds;
      await analyze(knex);
      await knex('bench_seed').update({ reindex_status: reindexStatus, reindex_seconds: reindexSeconds });
    }
    await publishCapturedChanges(knex, base.label);
    return {
      ...base,
      info: {
        reused: true,
        seededAt: new Date(Number(marker.seeded_at) * 1000).toISOString(),
        loadSeconds: Number(marker.load_seconds),
        reindexSeconds,
        reindexStatus,
        bytes: await sizeOnDisk(knex, base),
        migrations: await appliedMigrations(knex),
      },
    };
  } finally {
    await knex.destroy();
  }
}

async function seed(config: BenchConfig, base: Omit<BenchDatabase, 'info'>, knex: Knex, dialect: SeedDialect): Promise<SeedInfo> {
  const started = Date.now();
  const now = Math.floor(Date.now() / 1000);
  log(`${base.label}: migrating (migrateLatest) and seeding ${base.size.n.toLocaleString('en-US')} + ${SMALL_N.toLocaleString('en-US')} invoices`);
  await migrateLatest(knex);
  await knex.schema.createTable('bench_seed', (t) => {
    t.integer('format').notNullable();
    t.integer('n').notNullable();
    t.integer('small_n').notNullable();
    t.bigInteger('seeded_at').notNullable();
    t.double('load_seconds').notNullable();
    t.double('reindex_seconds').nullable();
    t.string('reindex_status', 32).notNullable();
  });
  await createSeedTables(knex, now);

  const n = base.size.n;
  const total = n + SMALL_N;
  const chunk = Math.max(1_000, Math.min(dialect.name === 'mysql' ? 50_000 : 20_000, Math.ceil(n / 20)));
  const progress = new Progress(`${base.label}: loading`, total, 'invoices');
  const plan: Array<{ directory: string; offset: number; count: number; salt: number }> = [
    { directory: BIG_DIRECTORY, offset: 0, count: n, salt: 0 },
    { directory: SMALL_DIRECTORY, offset: n, count: SMALL_N, salt: 7_777_777 },
  ];
  let done = 0;
  await withSeedSession(knex, dialect, async (run) => {
    for (const part of plan) {
      for (let from = 1; from <= part.count; from += chunk) {
        const to = Math.min(part.count, from + chunk - 1);
        await run(chunkStatements(dialect, { directory: part.directory, offset: part.offset, from, to, now, salt: part.salt }));
        done += to - from + 1;
        progress.update(done);
      }
    }
  });
  progress.finish();
  await analyze(knex);
  const loadSeconds = (Date.now() - started) / 1000;
  log(`${base.label}: loaded in ${loadSeconds.toFixed(1)} s; rebuilding the derived data (search:reindex)`);

  const result = await reindex(base, config);
  if (result.status === 'ok') await analyze(knex);
  await publishCapturedChanges(knex, base.label);
  await knex('bench_seed').insert({
    format: SEED_FORMAT,
    n,
    small_n: SMALL_N,
    seeded_at: now,
    load_seconds: loadSeconds,
    reindex_seconds: result.seconds,
    reindex_status: result.status,
  });
  return {
    reused: false,
    seededAt: new Date(now * 1000).toISOString(),
    loadSeconds,
    reindexSeconds: result.seconds,
    reindexStatus: result.status,
    bytes: await sizeOnDisk(knex, base),
    migrations: await appliedMigrations(knex),
  };
}

/**
 * What every seeded MariaDB or SQLite database holds before its invoices:
 * the customers and routes the INSERT … SELECT statements join, the two
 * clients (big and small directory) and the file categories.
 */
export async function createSeedTables(knex: Knex, now: number): Promise<void> {
  await knex.schema.createTable('bench_customers', (t) => {
    t.integer('i').primary();
    t.string('name', 255).notNullable();
    t.string('vat', 64).notNullable();
    t.string('country', 2).notNullable();
    t.string('currency', 3).notNullable();
    t.integer('tax_rate').notNullable();
    t.string('tax_label', 16).notNullable();
    t.text('address').notNullable();
    t.text('contacts').notNullable();
  });
  await knex.schema.createTable('bench_routes', (t) => {
    t.integer('i').primary();
    t.string('origin', 100).notNullable();
    t.string('destination', 100).notNullable();
  });
  await knex.batchInsert('bench_customers', customerRows() as never, 500);
  await knex.batchInsert('bench_routes', routeRows() as never, 500);

  const company = (name: string) => ({
    company_name: name,
    company_address: 'ul. Portowa 4\n80-001 Gdańsk\nPolska',
    company_vat: 'PL5860000000',
    company_bank_account: 'PL61 1090 1014 0000 0712 1981 2874',
    company_bank_name: 'Santander Bank Polska',
    created_at: now,
    updated_at: now,
  });
  await knex('clients').insert([
    { directory: BIG_DIRECTORY, name: 'Bench Big Haulage', api_key_hash: HASHER.hash(BIG_KEY), ...company('Bench Big Haulage Sp. z o.o.') },
    { directory: SMALL_DIRECTORY, name: 'Bench Small Cargo', api_key_hash: HASHER.hash(SMALL_KEY), ...company('Bench Small Cargo s.r.o.') },
  ]);
  // What authentication reads (migration 017): one key with every scope per directory.
  await knex('api_keys').insert(
    [
      [BIG_DIRECTORY, BIG_KEY],
      [SMALL_DIRECTORY, SMALL_KEY],
    ].map(([directory, key]) => ({ directory, name: 'bench', key_hash: HASHER.hash(key!), scopes: 'read,write,webhooks', created_at: now })),
  );
  if ((await knex('file_categories').count({ n: '*' }).first())?.n == 0) {
    await knex('file_categories').insert([
      { id: 1, name: 'CMR', visible_customer: 1 },
      { id: 2, name: 'Delivery note', visible_customer: 1 },
      { id: 3, name: 'Other', visible_customer: 0 },
    ]);
  }
}

/**
 * MariaDB: one connection with foreign key checks off for the load (the rows
 * are consistent by construction), each statement its own transaction.
 * SQLite: one transaction per chunk.
 */
export async function withSeedSession(knex: Knex, dialect: SeedDialect, work: (run: (statements: string[]) => Promise<void>) => Promise<void>): Promise<void> {
  if (dialect.name === 'sqlite') {
    await work((statements) =>
      knex.transaction(async (trx) => {
        for (const sql of statements) await trx.raw(sql);
      }),
    );
    return;
  }
  const connection = await knex.client.acquireConnection();
  try {
    // Each nesting level of the hash is materialized once, instead of merged into copies of its expressions.
    await knex.raw("SET SESSION foreign_key_checks = 0, optimizer_switch = 'derived_merge=off'").connection(connection);
    await work(async (statements) => {
      for (const sql of statements) await knex.raw(sql).connection(connection);
    });
    await knex.raw("SET SESSION foreign_key_checks = 1, optimizer_switch = 'derived_merge=on'").connection(connection);
  } finally {
    await knex.client.releaseConnection(connection);
  }
}

async function appliedMigrations(knex: Knex): Promise<string[]> {
  try {
    const rows = (await knex('knex_migrations').select('name').orderBy('id')) as Array<{ name: string }>;
    return rows.map((row) => row.name);
  } catch {
    return [];
  }
}

async function sizeOnDisk(knex: Knex, base: Omit<BenchDatabase, 'info'>): Promise<number> {
  if (base.engine === 'sqlite') {
    let bytes = 0;
    for (const file of ['app.sqlite', 'app.sqlite-wal']) {
      try {
        bytes += (await stat(path.join(base.dataDir, file))).size;
      } catch {
        // absent
      }
    }
    return bytes;
  }
  const [rows] = (await knex.raw(
    'SELECT SUM(data_length + index_length) AS bytes FROM information_schema.tables WHERE table_schema = DATABASE()',
  )) as unknown as [Array<{ bytes: unknown }>];
  return Number(rows[0]?.bytes ?? 0);
}
