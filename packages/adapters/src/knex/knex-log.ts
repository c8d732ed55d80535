import { inspect } from 'node:util';

/** Where knex's own warnings go: the process's logger (pino's shape fits), one entry each. */
export interface KnexLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** knex's `log` option: functions that take its messages instead of console.log. */
export interface KnexLogOption {
  warn(message: unknown): void;
  error(message: unknown): void;
  deprecate(message: unknown): void;
}

const ACQUIRE_FAILED = 'Acquire connection error: ';

/**
 * Without a `log` option knex prints its warnings on stdout with console.log,
 * and a failed connection attempt with its whole stack ("Acquire connection
 * error: Error: connect ECONNREFUSED ...\n    at TCPConnectWrap..."), once per
 * try: a database that is away for a moment reads like a crash. Here such a
 * failure is one warning with its reason and no stack (the caller gets the
 * error itself, a 503 or a failed job); any other message of knex is kept
 * whole.
 */
export function knexLogOption(logger: KnexLogger): KnexLogOption {
  const text = (message: unknown) => (typeof message === 'string' ? message : inspect(message, { depth: 5 }));
  return {
    warn(message) {
      const line = text(message);
      if (line.startsWith(ACQUIRE_FAILED)) {
        logger.warn({ reason: reasonOf(line.slice(ACQUIRE_FAILED.length)) }, 'database connection could not be acquired');
      } else {
        logger.warn({ detail: line }, 'knex warning');
      }
    },
    error: (message) => logger.error({ detail: text(message) }, 'knex error'),
    deprecate: (message) => logger.warn({ detail: text(message) }, 'knex deprecation'),
  };
}

/** The first line of a stack, without its `Error: ` name: `connect ECONNREFUSED 127.0.0.1:3306`. */
function reasonOf(stack: string): string {
  const first = stack.split('\n', 1)[0]!.trim();
  return first.replace(/^[A-Za-z]*Error: /, '');
}

/** A KnexLogger for processes without a structured logger (the CLI, scripts): one plain line per entry. */
export function lineKnexLogger(write: (line: string) => void): KnexLogger {
  const line = (fields: Record<string, unknown>, message: string) => write(`${message}: ${Object.values(fields).map(String).join(' ')}`);
  return { warn: line, error: line };
}
