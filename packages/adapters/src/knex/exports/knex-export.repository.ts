import type { Knex } from 'knex';
import type {
  ClaimedExport,
  CreateExportResult,
  DocumentLanguage,
  Export,
  ExportDocument,
  ExportLimits,
  ExportRepositoryPort,
  ExportStatus,
  NewExport,
  RemovedExport,
} from '@logi/domain';
import { PENDING_EXPORT } from '../events/event-tables.js';

const ACTIVE: ExportStatus[] = ['queued', 'running'];

type ExportRow = Record<string, unknown>;

/** A row as the domain reads it. */
export function toExport(row: ExportRow): Export {
  const nullableNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return {
    id: Number(row.id),
    directory: String(row.directory),
    status: String(row.status) as ExportStatus,
    created: Number(row.created),
    started: nullableNumber(row.started),
    finished: nullableNumber(row.finished),
    filters: JSON.parse(String(row.filters)) as Record<string, string>,
    documents: JSON.parse(String(row.documents)) as ExportDocument[],
    lang: String(row.lang) as DocumentLanguage,
    duplicate: Number(row.duplicate) === 1,
    csv: Number(row.csv) === 1,
    total: nullableNumber(row.total),
    done: Number(row.done),
    eventsCursor: Number(row.events_cursor),
    size: nullableNumber(row.size),
    sha256: row.sha256 == null ? null : String(row.sha256),
    expires: nullableNumber(row.expires),
    error: row.error == null ? null : String(row.error),
  };
}

/** Queued, or running under a lease that ran out (its runner died). */
function claimable(nowMs: number) {
  return (q: Knex.QueryBuilder): void => {
    void q.where({ status: 'queued' }).orWhere((r: Knex.QueryBuilder) => {
      void r.where({ status: 'running' }).where('lease_until', '<', nowMs);
    });
  };
}

/**
 * Exports in the `exports` table, which is also their work queue: claims by attempt number and lease, so a runner
 * that died is replaced and one that lost its claim writes nothing (docs/contribute/decisions/0041-exports.md).
 */
export class KnexExportRepository implements ExportRepositoryPort {
  constructor(private readonly knex: Knex) {}

  async create(draft: NewExport, limits: ExportLimits): Promise<CreateExportResult> {
    return this.knex.transaction(async (trx) => {
      // The client's row is the directory's lock: requests of one directory count and insert one after the other, so
      // neither limit is passed however many arrive at once (SQLite runs one transaction at a time anyway).
      await lockDirectory(trx, draft.directory);
      const active = (await trx('exports').where({ directory: draft.directory }).whereIn('status', ACTIVE).count({ n: '*' }).first()) as
        { n: unknown } | undefined;
      if (Number(active?.n ?? 0) >= limits.maxActive) return { refused: 'active' as const };
      const kept = await keptArchives(trx, draft.directory, limits.now);
      if (kept.bytes >= limits.maxKeptBytes) return { refused: 'storage' as const, oldestExpires: kept.oldestExpires ?? limits.now };
      const [inserted] = await trx('exports').insert({
        directory: draft.directory,
        status: 'queued',
        created: draft.created,
        filters: JSON.stringify(draft.filters),
        documents: JSON.stringify(draft.documents),
        lang: draft.lang,
        duplicate: draft.duplicate ? 1 : 0,
        csv: draft.csv ? 1 : 0,
        done: 0,
        events_cursor: draft.eventsCursor,
        attempt: 0,
      });
      return {
        created: toExport(
          (await trx('exports')
            .where({ id: Number(inserted) })
            .first()) as ExportRow,
        ),
      };
    });
  }

  async list(directory: string, limit: number): Promise<Export[]> {
    return ((await this.knex('exports').where({ directory }).orderBy('id', 'desc').limit(limit)) as ExportRow[]).map(toExport);
  }

  async find(directory: string, id: number): Promise<Export | null> {
    const row = (await this.knex('exports').where({ directory, id }).first()) as ExportRow | undefined;
    return row ? toExport(row) : null;
  }

  async listAll(limit: number): Promise<Array<Export & { attempt: number }>> {
    const rows = (await this.knex('exports').orderBy('id', 'desc').limit(limit)) as ExportRow[];
    return rows.map((row) => ({ ...toExport(row), attempt: Number(row.attempt) }));
  }

  async archiveKey(directory: string, id: number): Promise<string | null> {
    const row = (await this.knex('exports').select('archive_key').where({ directory, id, status: 'succeeded' }).first()) as ExportRow | undefined;
    return row?.archive_key == null ? null : String(row.archive_key);
  }

  async remove(directory: string, id: number): Promise<RemovedExport | null> {
    return this.knex.transaction(async (trx) => {
      const row = (await trx('exports').select('id', 'attempt').where({ directory, id }).first()) as ExportRow | undefined;
      if (!row) return null;
      await trx('exports').where({ id }).delete();
      return { id, attempts: Number(row.attempt) };
    });
  }

  async claimNext(nowMs: number, leaseUntilMs: number): Promise<ClaimedExport | null> {
    // A few candidates, the directory served longest ago first (each directory's oldest first): one directory's backlog
    // takes one runner at a time while another directory waits. The conditional update decides between runners racing.
    const lastClaims = this.knex('exports').select('directory').max({ last_claim: 'claimed_ms' }).groupBy('directory').as('d');
    const candidates = (await this.knex('exports as e')
      .select('e.id', 'e.attempt')
      .leftJoin(lastClaims, 'd.directory', 'e.directory')
      .where(claimable(nowMs))
      .orderByRaw('COALESCE(d.last_claim, 0), e.id')
      .limit(5)) as ExportRow[];
    for (const candidate of candidates) {
      const attempt = Number(candidate.attempt) + 1;
      const claimed = await this.knex('exports')
        .where({ id: candidate.id, attempt: candidate.attempt })
        .where(claimable(nowMs))
        .update({ status: 'running', attempt, lease_until: leaseUntilMs, done: 0, claimed_ms: nowMs });
      if (claimed === 1) {
        const row = (await this.knex('exports').where({ id: candidate.id }).first()) as ExportRow | undefined;
        if (row) return { export: toExport(row), attempt };
      }
    }
    return null;
  }

  async start(id: number, attempt: number, values: { total: number; started: number; leaseUntilMs: number }): Promise<boolean> {
    const updated = await this.knex('exports')
      .where({ id, attempt, status: 'running' })
      .update({ total: values.total, started: this.knex.raw('COALESCE(started, ?)', [values.started]), lease_until: values.leaseUntilMs, done: 0 });
    return updated === 1;
  }

  async progress(id: number, attempt: number, done: number, leaseUntilMs: number): Promise<boolean> {
    return (await this.knex('exports').where({ id, attempt, status: 'running' }).update({ done, lease_until: leaseUntilMs })) === 1;
  }

  async succeed(
    id: number,
    attempt: number,
    values: { archiveKey: string; size: number; sha256: string; done: number; finished: number; expires: number; maxKeptBytes: number },
  ): Promise<'succeeded' | 'lost' | 'over-budget'> {
    return this.knex.transaction(async (trx) => {
      // Locking reads only until the directory is locked: on MariaDB the first plain read fixes the snapshot the sum sees.
      const row = (await trx('exports').select('directory').where({ id, attempt, status: 'running' }).forUpdate().first()) as ExportRow | undefined;
      if (!row) return 'lost';
      // Under the directory's lock, as POST counts: two archives finishing at once never both fit in the last bytes.
      await lockDirectory(trx, String(row.directory));
      const kept = await keptArchives(trx, String(row.directory), values.finished);
      if (kept.bytes + values.size > values.maxKeptBytes) return 'over-budget';
      const finished = await this.finishIn(trx, id, attempt, {
        status: 'succeeded',
        archive_key: values.archiveKey,
        size: values.size,
        sha256: values.sha256,
        done: values.done,
        finished: values.finished,
        expires: values.expires,
        lease_until: null,
      });
      return finished ? 'succeeded' : 'lost';
    });
  }

  async fail(id: number, attempt: number, values: { error: string; finished: number; expires: number }): Promise<boolean> {
    return this.knex.transaction((trx) =>
      this.finishIn(trx, id, attempt, { status: 'failed', error: values.error, finished: values.finished, expires: values.expires, lease_until: null }),
    );
  }

  async isRunning(id: number, attempt: number): Promise<boolean> {
    return (await this.knex('exports').select('id').where({ id, attempt, status: 'running' }).first()) !== undefined;
  }

  async listExpired(now: number, limit: number): Promise<RemovedExport[]> {
    const rows = (await this.knex('exports')
      .select('id', 'attempt')
      .where('expires', '<=', now)
      .whereNotNull('archive_key')
      .orderBy('expires')
      .limit(limit)) as ExportRow[];
    return rows.map((row) => ({ id: Number(row.id), attempts: Number(row.attempt) }));
  }

  async forgetArchive(id: number): Promise<void> {
    await this.knex('exports').where({ id }).update({ archive_key: null });
  }

  async removeExpired(before: number, limit: number): Promise<number> {
    const ids = ((await this.knex('exports').select('id').where('expires', '<', before).orderBy('expires').limit(limit)) as ExportRow[]).map((row) =>
      Number(row.id),
    );
    if (ids.length === 0) return 0;
    return this.knex('exports').whereIn('id', ids).delete();
  }

  /** The final state and, in the same transaction, the note that makes its event (export.succeeded / export.failed). */
  private async finishIn(trx: Knex.Transaction, id: number, attempt: number, values: Record<string, unknown>): Promise<boolean> {
    const updated = await trx('exports').where({ id, attempt, status: 'running' }).update(values);
    if (updated !== 1) return false;
    await trx('event_pending').insert({ kind: PENDING_EXPORT, entity_id: id, captured_ms: Date.now() }).onConflict(['kind', 'entity_id']).ignore();
    return true;
  }
}

/** Locks the directory's client row until the transaction ends (SQLite: its transactions already run one at a time). */
async function lockDirectory(trx: Knex.Transaction, directory: string): Promise<void> {
  await trx('clients').select('id').where({ directory }).forUpdate();
}

/**
 * The archives a directory keeps at `now` (Unix seconds): succeeded, named, not yet expired; their bytes and when the
 * oldest expires (docs/contribute/decisions/0049-export-bounds.md).
 */
async function keptArchives(trx: Knex.Transaction, directory: string, now: number): Promise<{ bytes: number; oldestExpires: number | null }> {
  const row = (await trx('exports')
    .where({ directory, status: 'succeeded' })
    .whereNotNull('archive_key')
    .where('expires', '>', now)
    .sum({ bytes: 'size' })
    .min({ oldest: 'expires' })
    .first()) as { bytes: unknown; oldest: unknown } | undefined;
  return { bytes: Number(row?.bytes ?? 0), oldestExpires: row?.oldest == null ? null : Number(row.oldest) };
}
