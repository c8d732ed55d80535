import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { isMysql } from '../sql-dialect.js';
import { documentCodes, indexFold, SEARCH_KINDS, trigramCode, TRIGRAM_LENGTH, type SearchKind } from './search-text.js';

/**
 * The trigram index (tables `search_trigrams` and `search_pending`, migration
 * 003). A posting is (code, doc): the document `doc` (an invoice id or an order
 * id, by kind) has a trigram whose code is `code`. Documents written behind
 * the service's back are listed in `search_pending` by triggers and are
 * always candidates until indexed, so a search never misses them.
 */

/**
 * A posting list longer than this is not read into the process: a fragment
 * made only of such trigrams is narrowed by the database (a join of its
 * lists), and one with a single such trigram not at all.
 */
export const POSTINGS_CAP = 20_000;
/**
 * Posting list sizes by code, each trusted for a while (its TTL): a common
 * trigram stays common (probing it reads POSTINGS_CAP entries), and a rare
 * one changes slowly.
 */
const CODE_SIZES = new LRUCache<number, number>({ max: 100_000 });
const COMMON_FOR_MS = 10 * 60_000;
const SIZE_FOR_MS = 60_000;
/**
 * How many posting lists are joined: the rarest first, each later one only
 * looked up (by its primary key) for the documents still in the running.
 */
const INTERSECTED_TRIGRAMS = 4;
/** Where list lengths are estimates (MariaDB), a list up to this many times the cap may lead a join. */
const LEAD_FACTOR = 10;
/** Rows per INSERT: well below both databases' placeholder limits. */
const INSERT_CHUNK = 400;

export type Candidates = { ids: number[] } | null;

/**
 * Candidates as a filter: a list of ids, or, for a fragment whose every
 * trigram is common (a dense match such as a route name in thousands of
 * items), a subquery the database evaluates itself (`sql` yields the ids).
 */
export type CandidateFilter = { ids: number[] } | { sql: string; bindings: number[]; pending: number[] } | null;

/** What the index can do for a fragment. */
type Plan =
  | { kind: 'scan' }
  | { kind: 'ids'; ids: number[] }
  /** `codes` rarest first (joinOrder); `ordered` false when every list is common and the database picks the order. */
  | { kind: 'join'; codes: number[]; ordered: boolean; pending: number[] };

/**
 * The documents of `kind` in `directory` that may contain `fragment`: a
 * superset of the matches, or null when the index cannot narrow it (a
 * fragment shorter than a trigram, or only trigrams too common to list), in
 * which case the caller scans.
 */
export async function trigramCandidates(knex: Knex, kind: SearchKind, directory: string, fragment: string, cap = POSTINGS_CAP): Promise<Candidates> {
  const plan = await planSearch(knex, kind, directory, fragment, cap);
  if (plan.kind === 'scan') return null;
  if (plan.kind === 'ids') return { ids: plan.ids };
  const ids = await joinedIds(knex, plan, cap);
  return ids && { ids };
}

/**
 * Like trigramCandidates, but with `common: 'subquery'` a fragment made only
 * of common trigrams is still narrowed: by the join of its posting lists,
 * left to the database as a subquery (its optimizer starts from the shortest
 * list by its own estimates), instead of a scan of every document.
 */
export async function trigramCandidateFilter(
  knex: Knex,
  kind: SearchKind,
  directory: string,
  fragment: string,
  options: { cap?: number; common: 'subquery' | 'scan' },
): Promise<CandidateFilter> {
  const cap = options.cap ?? POSTINGS_CAP;
  const plan = await planSearch(knex, kind, directory, fragment, cap);
  if (plan.kind === 'scan') return null;
  if (plan.kind === 'ids') return { ids: plan.ids };
  // The first list is short enough to lead, so the join yields at most about as many documents; a
  // list longer than its estimate is cut off, and the fragment is then served as a common one.
  const ids = plan.ordered ? await joinedIds(knex, plan, cap * LEAD_FACTOR) : null;
  if (ids) return { ids };
  return options.common === 'scan' ? null : { ...joinedPostings(knex, plan.codes, false), pending: plan.pending };
}

/** The documents of a join plan and the pending ones, or null when the join lists more than `most`. */
async function joinedIds(knex: Knex, plan: Extract<Plan, { kind: 'join' }>, most: number): Promise<number[] | null> {
  const join = joinedPostings(knex, plan.codes, plan.ordered);
  const rows = await rowsOf<{ doc: unknown }>(knex.raw(`${join.sql} LIMIT ${most + 1}`, join.bindings));
  if (rows.length > most) return null;
  const ids = new Set(rows.map((row) => Number(row.doc)));
  for (const id of plan.pending) ids.add(id);
  return [...ids];
}

async function planSearch(knex: Knex, kind: SearchKind, directory: string, fragment: string, cap: number): Promise<Plan> {
  const chars = indexFold(fragment);
  if (chars.length < TRIGRAM_LENGTH) return { kind: 'scan' };
  // Codes by position in the fragment (a repeated trigram keeps its first position).
  const positions = new Map<number, number>();
  for (let start = 0; start + TRIGRAM_LENGTH <= chars.length; start += 1) {
    const code = trigramCode(kind, directory, chars.slice(start, start + TRIGRAM_LENGTH).join(''));
    if (!positions.has(code)) positions.set(code, start);
  }
  // Posting list sizes seen a moment ago are not probed again. A size only decides which lists are
  // intersected (a stale one costs time, never a row); an empty list is never remembered, since it
  // alone may rule everything out.
  const estimated = isMysql(knex);
  const sizes: Array<{ code: number; n: number }> = [];
  const toProbe: number[] = [];
  for (const code of positions.keys()) {
    const known = CODE_SIZES.get(code);
    if (known !== undefined) sizes.push({ code, n: known });
    else toProbe.push(code);
  }
  if (toProbe.length > 0) {
    const probed = estimated ? await estimatedSizes(knex, toProbe) : await countedSizes(knex, toProbe, cap);
    for (const size of probed) {
      sizes.push(size);
      if (size.n > cap) CODE_SIZES.set(size.code, size.n, { ttl: COMMON_FOR_MS });
      else if (size.n > 0) CODE_SIZES.set(size.code, size.n, { ttl: SIZE_FOR_MS });
    }
  }
  const pending = await pendingIds(knex, kind);
  if (pending === null) return { kind: 'scan' };
  // Some trigram of the fragment is in no document: only pending documents can match.
  if (sizes.some((row) => row.n === 0)) return { kind: 'ids', ids: pending };
  // A list may lead the join when it is short enough to read inside the database: up to the cap where
  // only a count up to the cap is known, up to ten times the cap by the optimizer's estimate.
  const leadMax = estimated ? cap * LEAD_FACTOR : cap;
  if (sizes.some((row) => row.n <= leadMax)) return { kind: 'join', codes: joinOrder(sizes, positions), ordered: true, pending };
  // Every list is common. Two or more still narrow together (Gda + ń–B + rli: one route of many); the
  // database picks the order.
  if (positions.size < 2) return { kind: 'scan' };
  return { kind: 'join', codes: joinOrder(sizes, positions), ordered: false, pending };
}

/** How long each posting list is, counted no further than the cap, in one statement. */
async function countedSizes(knex: Knex, codes: number[], cap: number): Promise<Array<{ code: number; n: number }>> {
  const probes = codes.map(() => `SELECT ? AS code, (SELECT COUNT(*) FROM (SELECT 1 FROM search_trigrams WHERE code = ? LIMIT ${cap + 1}) p) AS n`);
  const rows = await rowsOf<{ code: unknown; n: unknown }>(
    knex.raw(
      probes.join(' UNION ALL '),
      codes.flatMap((code) => [code, code]),
    ),
  );
  return rows.map((row) => ({ code: Number(row.code), n: Number(row.n) }));
}

/**
 * How long each posting list is by MariaDB's own estimate (EXPLAIN's rows:
 * two dives into the primary key per list, whatever its length), in one
 * statement. Seen at a million invoices: about twice the true length, in the
 * same order, which is all a choice of the rarest list needs; a list in no
 * document is estimated at one row, and the join that starts from it ends
 * at once.
 */
async function estimatedSizes(knex: Knex, codes: number[]): Promise<Array<{ code: number; n: number }>> {
  const parts = codes.map(() => 'SELECT 1 FROM search_trigrams WHERE code = ?');
  const rows = await rowsOf<{ id: unknown; table: unknown; rows: unknown }>(knex.raw(`EXPLAIN ${parts.join(' UNION ALL ')}`, codes));
  const sizes = codes.map((code) => ({ code, n: Number.POSITIVE_INFINITY }));
  for (const row of rows) {
    const part = Number(row.id) - 1;
    if (row.table === 'search_trigrams' && sizes[part] && Number.isFinite(Number(row.rows))) sizes[part].n = Math.max(1, Number(row.rows));
  }
  return sizes;
}

/**
 * The lists to join, rarest first: then, each time, the shortest list whose
 * trigram overlaps none already taken (overlapping trigrams come together:
 * `gda`, `dan` and `ans` all say Gdańsk, `k–b` and `–be` say more), an
 * overlapping one only when no other is left. Lists after the first are
 * only looked up, so long ones may join too.
 */
function joinOrder(sizes: Array<{ code: number; n: number }>, positions: Map<number, number>): number[] {
  const left = [...sizes].sort((a, b) => a.n - b.n || positions.get(a.code)! - positions.get(b.code)!);
  const taken: number[] = [];
  const overlaps = (code: number) => taken.some((other) => Math.abs(positions.get(other)! - positions.get(code)!) < TRIGRAM_LENGTH);
  while (taken.length < INTERSECTED_TRIGRAMS && left.length > 0) {
    const next = left.findIndex((row) => !overlaps(row.code));
    const [row] = left.splice(next === -1 ? 0 : next, 1);
    taken.push(row!.code);
  }
  return taken;
}

/**
 * The documents in every one of the posting lists of `codes`, as one
 * statement: a nested loop over the first list, each other one probed by its
 * primary key (code, doc). `ordered` keeps the given order (the rarest list
 * first, known from the probes); otherwise the database picks it.
 */
function joinedPostings(knex: Knex, codes: number[], ordered: boolean): { sql: string; bindings: number[] } {
  const mysql = isMysql(knex);
  const joinWord = ordered && !mysql ? 'CROSS JOIN' : 'JOIN';
  const from = codes.map((_, index) => (index === 0 ? 'search_trigrams t0' : `${joinWord} search_trigrams t${index} ON t${index}.doc = t0.doc`)).join(' ');
  const where = codes.map((_, index) => `t${index}.code = ?`).join(' AND ');
  const select = ordered && mysql ? 'SELECT STRAIGHT_JOIN' : 'SELECT';
  return { sql: `${select} t0.doc FROM ${from} WHERE ${where}`, bindings: codes };
}

/** Documents of a kind written behind the service's back and not indexed yet; null when too many to list. */
async function pendingIds(knex: Knex, kind: SearchKind): Promise<number[] | null> {
  const rows = (await knex('search_pending')
    .select('entity_id')
    .where({ kind })
    .limit(POSTINGS_CAP + 1)) as Array<{ entity_id: unknown }>;
  return rows.length > POSTINGS_CAP ? null : rows.map((row) => Number(row.entity_id));
}

async function rowsOf<T>(raw: Knex.Raw): Promise<T[]> {
  const result = (await raw) as unknown;
  // mysql2 answers [rows, fields]; better-sqlite3 answers rows.
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

/** The texts of each document, read as they are in the database now. */
export interface IndexedDocument {
  id: number;
  directory: string;
  texts: string[];
}

/** The invoices' documents of both invoice kinds, for the given ids. */
export async function readInvoiceDocuments(knex: Knex, ids: number[]): Promise<Map<SearchKind, IndexedDocument[]>> {
  const byKind = new Map<SearchKind, IndexedDocument[]>([
    [SEARCH_KINDS.invoiceText, []],
    [SEARCH_KINDS.customerName, []],
  ]);
  if (ids.length === 0) return byKind;
  const [invoices, orders, items] = (await Promise.all([
    knex('invoices').select('id', 'directory', 'nr', 'customer_name').whereIn('id', ids),
    knex('invoice_orders').select('invoice_id', 'nr').whereIn('invoice_id', ids),
    knex('invoice_items').select('invoice_id', 'name').whereIn('invoice_id', ids),
  ])) as [
    Array<{ id: unknown; directory: string; nr: string; customer_name: string }>,
    Array<{ invoice_id: unknown; nr: string }>,
    Array<{ invoice_id: unknown; name: string }>,
  ];
  const related = new Map<number, string[]>();
  for (const row of orders) pushTo(related, Number(row.invoice_id), row.nr);
  for (const row of items) pushTo(related, Number(row.invoice_id), row.name);
  for (const invoice of invoices) {
    const id = Number(invoice.id);
    byKind.get(SEARCH_KINDS.invoiceText)!.push({ id, directory: invoice.directory, texts: [invoice.nr, ...(related.get(id) ?? [])] });
    byKind.get(SEARCH_KINDS.customerName)!.push({ id, directory: invoice.directory, texts: [invoice.customer_name] });
  }
  return byKind;
}

/** The orders' documents (their nr), for the given ids. */
export async function readOrderDocuments(knex: Knex, ids: number[]): Promise<Map<SearchKind, IndexedDocument[]>> {
  if (ids.length === 0) return new Map([[SEARCH_KINDS.orderNr, []]]);
  const rows = (await knex('orders').select('id', 'directory', 'nr').whereIn('id', ids)) as Array<{ id: unknown; directory: string; nr: string }>;
  return new Map([[SEARCH_KINDS.orderNr, rows.map((row) => ({ id: Number(row.id), directory: row.directory, texts: [row.nr] }))]]);
}

function pushTo(map: Map<number, string[]>, key: number, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

type Postings = Map<SearchKind, Map<number, Set<number>>>;

function postingsOf(documents: Map<SearchKind, IndexedDocument[]>): Postings {
  const postings: Postings = new Map();
  for (const [kind, docs] of documents) {
    const byDoc = new Map<number, Set<number>>();
    for (const doc of docs) byDoc.set(doc.id, documentCodes(kind, doc.directory, doc.texts));
    postings.set(kind, byDoc);
  }
  return postings;
}

/**
 * Runs a write of some invoices or orders and keeps the index in step with
 * it, in the writer's transaction: every writer of these tables goes through
 * here (the fixtures loader today), so no import path can forget the index.
 * The postings of the texts as they were are removed, those of the texts as
 * they are now added, and the documents leave the pending list.
 */
export async function writeIndexed<T>(
  trx: Knex.Transaction,
  read: (knex: Knex, ids: number[]) => Promise<Map<SearchKind, IndexedDocument[]>>,
  ids: number[],
  write: () => Promise<T>,
): Promise<T> {
  const before = postingsOf(await read(trx, ids));
  const result = await write();
  const after = postingsOf(await read(trx, ids));
  const removed: Array<[number, number]> = [];
  const added: Array<[number, number]> = [];
  for (const [kind, docs] of after) {
    const old = before.get(kind) ?? new Map<number, Set<number>>();
    for (const [id, codes] of docs) {
      const oldCodes = old.get(id) ?? new Set<number>();
      for (const code of codes) if (!oldCodes.has(code)) added.push([code, id]);
      for (const code of oldCodes) if (!codes.has(code)) removed.push([code, id]);
    }
    for (const [id, oldCodes] of old) if (!docs.has(id)) for (const code of oldCodes) removed.push([code, id]);
  }
  await deletePostings(trx, removed);
  await insertPostings(trx, added);
  for (const kind of after.keys()) {
    for (let start = 0; start < ids.length; start += INSERT_CHUNK) {
      await trx('search_pending')
        .where({ kind })
        .whereIn('entity_id', ids.slice(start, start + INSERT_CHUNK))
        .delete();
    }
  }
  return result;
}

async function deletePostings(knex: Knex, postings: Array<[number, number]>): Promise<void> {
  for (let start = 0; start < postings.length; start += INSERT_CHUNK) {
    const chunk = postings.slice(start, start + INSERT_CHUNK);
    await knex.raw(`DELETE FROM search_trigrams WHERE (code, doc) IN (${chunk.map(() => '(?, ?)').join(', ')})`, chunk.flat());
  }
}

/** Inserts postings, skipping any already there (a document indexed twice, or a stale posting). */
export async function insertPostings(knex: Knex, postings: Array<[number, number]>): Promise<void> {
  const verb = isMysql(knex) ? 'INSERT IGNORE INTO' : 'INSERT OR IGNORE INTO';
  for (let start = 0; start < postings.length; start += INSERT_CHUNK) {
    const chunk = postings.slice(start, start + INSERT_CHUNK);
    await knex.raw(`${verb} search_trigrams (code, doc) VALUES ${chunk.map(() => '(?, ?)').join(', ')}`, chunk.flat());
  }
}

/**
 * Indexes up to `limit` documents of the pending list (rows written behind
 * the service's back) and takes them off it, in one transaction. The pending
 * rows are deleted first, which locks them: a writer changing one of those
 * documents meanwhile lists it again once this commits, so nothing is left
 * unindexed. Postings of the documents' old texts may stay; they only add
 * candidates. Returns how many pending entries were handled.
 */
export async function indexPendingDocuments(knex: Knex, limit = 2_000): Promise<number> {
  const count = Math.max(1, Math.floor(limit));
  return knex.transaction(async (trx) => {
    const taken = await rowsOf<{ kind: unknown; entity_id: unknown }>(
      isMysql(trx)
        ? trx.raw(`DELETE FROM search_pending ORDER BY kind, entity_id LIMIT ${count} RETURNING kind, entity_id`)
        : trx.raw(
            `DELETE FROM search_pending WHERE (kind, entity_id) IN (SELECT kind, entity_id FROM search_pending ORDER BY kind, entity_id LIMIT ${count}) ` +
              'RETURNING kind, entity_id',
          ),
    );
    if (taken.length === 0) return 0;
    const invoiceIds = new Set<number>();
    const orderIds = new Set<number>();
    for (const row of taken) (Number(row.kind) === SEARCH_KINDS.orderNr ? orderIds : invoiceIds).add(Number(row.entity_id));
    const postings: Array<[number, number]> = [];
    for (const documents of [await readInvoiceDocuments(trx, [...invoiceIds]), await readOrderDocuments(trx, [...orderIds])]) {
      for (const [id, codes] of [...postingsOf(documents).values()].flatMap((byDoc) => [...byDoc])) for (const code of codes) postings.push([code, id]);
    }
    await insertPostings(trx, postings);
    return taken.length;
  });
}
