/** Where a command writes: results to `out` (so they can be piped), messages to `err`. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
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
  fixtures:load <file.json>                    migrate, then load a fixture file (idempotent)
  clients:create --directory <id> [--name <text>]
                                               create a client and print its new API key once
  clients:list                                 list client directories
  clients:rotate-key --directory <id>          issue a new API key (the old one stops working)

The database comes from DATABASE_URL, else the SQLite file in DATA_DIR (default ./data).`;
