import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex, migrateLatest } from '@logi/adapters';

/** Every repository test runs against both profiles. */
export const PROFILES = ['sqlite', 'mariadb'] as const;
export type Profile = (typeof PROFILES)[number];

export const MARIADB_ROOT_URL = 'mysql://root@127.0.0.1:3306/mysql';

export interface TestDatabase {
  knex: Knex;
  profile: Profile;
  /** The DATABASE_URL of a MariaDB test database, null for SQLite. */
  databaseUrl: string | null;
  dataDir: string;
  /** Closes the pool and removes the database (or the SQLite directory). */
  drop(): Promise<void>;
}

/** A fresh database of its own for one test file, migrated unless told otherwise. */
export async function openTestDatabase(profile: Profile, label: string, options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const migrate = options.migrate ?? true;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `logi-${label}-`));
  if (profile === 'sqlite') {
    const knex = createKnex({ databaseUrl: null, dataDir });
    if (migrate) await migrateLatest(knex);
    return {
      knex,
      profile,
      databaseUrl: null,
      dataDir,
      async drop() {
        await knex.destroy();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  const name = `logi_test_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  await withMariadbAdmin((admin) => admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`));
  const databaseUrl = `mysql://root@127.0.0.1:3306/${name}`;
  const knex = createKnex({ databaseUrl, dataDir });
  if (migrate) await migrateLatest(knex);
  return {
    knex,
    profile,
    databaseUrl,
    dataDir,
    async drop() {
      await knex.destroy();
      await withMariadbAdmin((admin) => admin.raw(`DROP DATABASE IF EXISTS \`${name}\``));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function withMariadbAdmin<T>(work: (admin: Knex) => Promise<T>): Promise<T> {
  await ensureMariadb();
  const admin = createKnex({ databaseUrl: MARIADB_ROOT_URL, dataDir: os.tmpdir() });
  try {
    return await work(admin);
  } finally {
    await admin.destroy();
  }
}

let mariadbReady: Promise<void> | null = null;

/** Starts the machine's MariaDB when it does not answer (as scripts/lib/setup.sh does). */
export function ensureMariadb(): Promise<void> {
  mariadbReady ??= (async () => {
    if (await mariadbAnswers()) return;
    await new Promise<void>((resolve, reject) => {
      const child = spawn('start-stop-daemon', ['--start', '--oknodo', '--background', '--exec', '/usr/sbin/mariadbd', '--', '--user=mysql'], {
        stdio: 'ignore',
      });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`start-stop-daemon exited with ${code}`))));
    });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (await mariadbAnswers()) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error('MariaDB did not start within 30 s');
  })();
  return mariadbReady;
}

async function mariadbAnswers(): Promise<boolean> {
  const probe = createKnex({ databaseUrl: MARIADB_ROOT_URL, dataDir: os.tmpdir() });
  try {
    await probe.raw('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await probe.destroy();
  }
}

/** Every row of the schema's tables, for before/after comparisons. */
export async function snapshot(knex: Knex): Promise<Record<string, unknown[]>> {
  const tables: Array<[string, string[]]> = [
    ['clients', ['directory']],
    ['api_keys', ['id']],
    ['file_categories', ['id']],
    ['orders', ['id']],
    ['order_files', ['id']],
    ['invoices', ['id']],
    ['invoice_orders', ['invoice_id', 'position']],
    ['invoice_items', ['invoice_id', 'position']],
  ];
  const out: Record<string, unknown[]> = {};
  for (const [table, order] of tables) out[table] = await knex(table).select('*').orderBy(order);
  return out;
}

/** Counts the SQL statements a piece of work sends. */
export async function countQueries<T>(knex: Knex, work: () => Promise<T>): Promise<{ result: T; queries: string[] }> {
  const queries: string[] = [];
  const listener = (query: { sql: string }) => queries.push(query.sql);
  knex.on('query', listener);
  try {
    return { result: await work(), queries };
  } finally {
    knex.off('query', listener);
  }
}
