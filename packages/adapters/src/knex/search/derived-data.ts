import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';
import { documentCodes } from './search-text.js';
import { readInvoiceDocuments, readOrderDocuments, type IndexedDocument } from './trigram-index.js';
import type { SearchKind } from './search-text.js';

export interface RebuildProgress {
  stage: 'invoices' | 'orders' | 'sorting' | 'counts';
  done: number;
  total: number;
}

export interface RebuildResult {
  invoices: number;
  orders: number;
  postings: number;
}

/** Documents read per batch. */
const BATCH = 2_000;
/** Rows per INSERT of numbers written inline. */
const ROWS_PER_INSERT = 5_000;

/**
 * Rebuilds the trigram index, the kept counts and the data versions (`pnpm cli search:reindex`, while no other process
 * writes invoices or orders); postings are appended in key order (docs/contribute/decisions/0022-trigram-search-index.md).
 */
export async function rebuildDerivedData(knex: Knex, options: { onProgress?: (progress: RebuildProgress) => void } = {}): Promise<RebuildResult> {
  const report = options.onProgress ?? (() => undefined);
  const mysql = isMysql(knex);
  await knex.raw('DROP TABLE IF EXISTS search_trigrams_staging');
  await knex.raw('DROP TABLE IF EXISTS search_trigrams_next');
  await knex.raw(
    mysql
      ? 'CREATE TABLE search_trigrams_staging (code BIGINT UNSIGNED NOT NULL, doc INT UNSIGNED NOT NULL) ENGINE=InnoDB'
      : 'CREATE TABLE search_trigrams_staging (code INTEGER NOT NULL, doc INTEGER NOT NULL)',
  );
  try {
    const pendingBefore = (await knex('search_pending').count({ n: '*' }).first()) as { n: unknown };
    let postings = 0;
    const invoices = await forEachBatch(
      knex,
      'invoices',
      readInvoiceDocuments,
      async (documents) => {
        postings += await stage(knex, documents);
      },
      (done, total) => report({ stage: 'invoices', done, total }),
    );
    const orders = await forEachBatch(
      knex,
      'orders',
      readOrderDocuments,
      async (documents) => {
        postings += await stage(knex, documents);
      },
      (done, total) => report({ stage: 'orders', done, total }),
    );

    report({ stage: 'sorting', done: 0, total: postings });
    await knex.raw(
      mysql
        ? 'CREATE TABLE search_trigrams_next LIKE search_trigrams'
        : 'CREATE TABLE search_trigrams_next (code INTEGER NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (code, doc)) WITHOUT ROWID',
    );
    // A sort, then appends in key order; a repeated pair (a hash shared by two kinds of one id) is skipped.
    await knex.raw(
      `${mysql ? 'INSERT IGNORE INTO' : 'INSERT OR IGNORE INTO'} search_trigrams_next (code, doc) SELECT code, doc FROM search_trigrams_staging ORDER BY code, doc`,
    );
    if (mysql) {
      await knex.raw('RENAME TABLE search_trigrams TO search_trigrams_old, search_trigrams_next TO search_trigrams');
      await knex.raw('DROP TABLE search_trigrams_old');
    } else {
      await knex.transaction(async (trx) => {
        await trx.raw('DROP TABLE search_trigrams');
        await trx.raw('ALTER TABLE search_trigrams_next RENAME TO search_trigrams');
      });
    }
    report({ stage: 'sorting', done: postings, total: postings });
    // Pending documents were all read above; documents marked while this ran stay pending.
    if (Number(pendingBefore.n) > 0) await knex('search_pending').delete();

    report({ stage: 'counts', done: 0, total: 1 });
    await rebuildCounts(knex);
    report({ stage: 'counts', done: 1, total: 1 });
    return { invoices, orders, postings };
  } finally {
    await knex.raw('DROP TABLE IF EXISTS search_trigrams_staging');
  }
}

/** The kept counts from a GROUP BY over the invoices, and every directory's version bumped, in one transaction. */
export async function rebuildCounts(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  await knex.transaction(async (trx) => {
    await trx('invoice_counts').delete();
    await trx.raw(
      'INSERT INTO invoice_counts (directory, type, status, branch_id, customer_country, n) ' +
        'SELECT directory, type, status, branch_id, customer_country, COUNT(*) FROM invoices GROUP BY directory, type, status, branch_id, customer_country',
    );
    await rebuildCustomerNameCounts(trx);
    await trx('directory_versions').update({ version: trx.raw('version + 1') });
    await trx.raw(
      mysql
        ? 'INSERT IGNORE INTO directory_versions (directory, version) SELECT directory, 1 FROM clients'
        : 'INSERT OR IGNORE INTO directory_versions (directory, version) SELECT directory, 1 FROM clients',
    );
  });
}

/** Invoices per directory and customer name (migration 012), from a GROUP BY over the invoices. */
export async function rebuildCustomerNameCounts(knex: Knex): Promise<void> {
  // Migration 003 rebuilds the derived data of its day, before 012 makes this table.
  if (!(await knex.schema.hasTable('customer_name_counts'))) return;
  await knex('customer_name_counts').delete();
  // Grouped by the exact bytes on MariaDB, as the table's key is (invoices compare names by the collation).
  const name = isMysql(knex) ? 'customer_name COLLATE utf8mb4_bin' : 'customer_name';
  await knex.raw(
    `INSERT INTO customer_name_counts (directory, customer_name, n) SELECT directory, ${name}, COUNT(*) FROM invoices GROUP BY directory, ${name}`,
  );
}

async function forEachBatch(
  knex: Knex,
  table: 'invoices' | 'orders',
  read: (knex: Knex, ids: number[]) => Promise<Map<SearchKind, IndexedDocument[]>>,
  use: (documents: Map<SearchKind, IndexedDocument[]>) => Promise<void>,
  progress: (done: number, total: number) => void,
): Promise<number> {
  const counted = (await knex(table).count({ n: '*' }).first()) as { n: unknown };
  const total = Number(counted.n);
  let done = 0;
  let after = 0;
  progress(0, total);
  for (;;) {
    const ids = ((await knex(table).select('id').where('id', '>', after).orderBy('id').limit(BATCH)) as Array<{ id: unknown }>).map((row) => Number(row.id));
    if (ids.length === 0) break;
    await use(await read(knex, ids));
    after = ids[ids.length - 1]!;
    done += ids.length;
    progress(Math.min(done, total), Math.max(total, done));
  }
  return done;
}

/** Writes the postings of some documents into the staging table; returns how many. */
async function stage(knex: Knex, documents: Map<SearchKind, IndexedDocument[]>): Promise<number> {
  const rows: string[] = [];
  for (const [kind, docs] of documents) {
    for (const doc of docs) {
      for (const code of documentCodes(kind, doc.directory, doc.texts)) rows.push(`(${integer(code)},${integer(doc.id)})`);
    }
  }
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await knex.raw(`INSERT INTO search_trigrams_staging (code, doc) VALUES ${rows.slice(start, start + ROWS_PER_INSERT).join(',')}`);
  }
  return rows.length;
}

/** Numbers written into SQL text must be whole numbers this code computed; anything else is a bug. */
function integer(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`not an index number: ${value}`);
  return String(value);
}
