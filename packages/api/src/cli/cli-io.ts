/** Where a command writes: results to `out` (so they can be piped), messages to `err`. */
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** A progress line that replaces the previous one on a terminal; absent, progress goes to `err` now and then. */
  progress?(line: string): void;
}

/**
 * A progress bar for long commands: `[#####.....] 52% invoices 520000/1000000`.
 * On a terminal it redraws one line; elsewhere it prints a line per tenth.
 */
export function progressBar(io: CliIo): { update(label: string, done: number, total: number): void; end(): void } {
  let lastTenth = new Map<string, number>();
  let drawn = false;
  return {
    update(label, done, total) {
      const ratio = total > 0 ? Math.min(1, done / total) : 1;
      const filled = Math.round(ratio * 30);
      const line = `[${'#'.repeat(filled)}${'.'.repeat(30 - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${label} ${done}/${total}`;
      if (io.progress) {
        io.progress(line);
        drawn = true;
        return;
      }
      const tenth = Math.floor(ratio * 10);
      if (lastTenth.get(label) !== tenth) {
        lastTenth.set(label, tenth);
        io.err(line);
      }
    },
    end() {
      if (drawn) io.progress?.('');
      drawn = false;
      lastTenth = new Map();
    },
  };
}

/** A wrong command line: the runner prints the message and the usage, and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command that could not do its work for a reason the operator can fix: one line, exit 1. */
export class CommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}

export const USAGE = `Usage: pnpm cli <command> [options]

Commands:
  db:migrate                                   create or update the database schema
  db:after-restore [--highest-issued <id>]     once after a backup was restored, before the API serves:
                                               new event ids start past any a client may have seen, and
                                               the feed answers 410 to cursors the restore lost; with
                                               Redis, the kept Idempotency-Key answers are removed
  fixtures:load <file.json>                    migrate, then load a fixture file (idempotent)
  clients:create --directory <id> [--name <text>]
                                               create a client and print its new API key (every scope) once
  clients:list                                 list client directories
  clients:rotate-key --directory <id>          issue a new API key with every scope; all other keys of the
                                               directory stop working at once (no-outage rotation: keys:*)
  keys:create --directory <id> [--name <text>] [--scopes read,write,webhooks] [--expires-in-days <1..3650>]
                                               another key of the directory, printed once, then "id: <key id>"
  keys:list --directory <id>                   the directory's keys: id, name, scopes, created, expires,
                                               last used, revoked (never the key)
  keys:revoke --directory <id> --key-id <id>   revoke a key: every API process refuses it from the next request
  search:reindex                               rebuild the search index and kept counts from the tables
                                               (after rows were written straight into the database)
  pdf-cache:clear                              remove every cached PDF (pdf-cache/ in file storage)
  webhooks:list [--directory <id>]             webhook endpoints: state, pending attempts, failures and
                                               successes of the last 24 h, last success, failing since
  webhooks:deliveries --endpoint <id> [--limit <n>]
                                               an endpoint's latest attempts with their answers or errors
  webhooks:enable --endpoint <id>              re-enable an endpoint the service disabled
  webhooks:allow-private --directory <id>      let one client aim webhooks at http and private addresses
  webhooks:deny-private --directory <id>       withdraw that (deliveries to such endpoints are then refused)
  webhooks:private-targets                     the directories allowed private webhook targets
  webhooks:reencrypt                           encrypt every webhook secret with the current key
                                               (the first of SECRETS_ENCRYPTION_KEYS); idempotent
  secrets:generate-key                         print a new SECRETS_ENCRYPTION_KEYS entry, <id>:<base64 of 32
                                               bytes> (needs no configuration or database)
  events:status                                changes waiting to be published, newest event, pending attempts
  exports:list [--directory <id>] [--limit <n>]
                                               the newest exports: status, progress, attempts, lease, size, expiry

The database comes from DATABASE_URL, else the SQLite file in DATA_DIR (default ./data).
With DATABASE_URL, webhooks:reencrypt needs SECRETS_ENCRYPTION_KEYS; the other commands do not read it.`;
