import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';

/**
 * Fields that hold credentials wherever a log line carries them: request
 * headers, webhook secrets, API keys, passwords, the values bound to a
 * statement. pino replaces them before the line is written.
 */
export const LOG_REDACT_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'headers.cookie',
  '*.headers.cookie',
  'secret',
  '*.secret',
  'secrets',
  '*.secrets',
  'password',
  '*.password',
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'bindings',
  '*.bindings',
];

export const REDACTED = '[redacted]';

/** Secrets recognisable by their shape in free text (an error's message, say): each keeps its prefix, loses its value. */
const SECRET_SHAPES: ReadonlyArray<[RegExp, string]> = [
  [/\b(Bearer|Basic) +[\w.~+/=-]+/gi, `$1 ${REDACTED}`],
  [/whsec_[A-Za-z0-9+/=]+/g, `whsec_${REDACTED}`],
  [/lgk_[A-Za-z0-9_-]+/g, `lgk_${REDACTED}`],
  // A file link's token, the credential in its path (/v1/file-links/<token>).
  [/(\/file-links\/)[A-Za-z0-9_.~%-]+/gi, `$1${REDACTED}`],
  // The password of a URL: mysql://user:password@host.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#\s@]*:)[^@\s/?#]+@/gi, `$1${REDACTED}@`],
];

/** `text` with every secret of a known shape masked. */
export function maskSecrets(text: string): string {
  return SECRET_SHAPES.reduce((masked, [shape, replacement]) => masked.replace(shape, replacement), text);
}

export interface LoggerSettings {
  level: string;
  /** Fields on every line (`service`, `pid`). */
  base?: Record<string, unknown>;
}

/**
 * The process's logger (the API, the worker, the tests' in-process API): JSON
 * lines on stdout, or `destination`, with credentials redacted by field and,
 * in messages and errors, by shape. The database adapter keeps bound values
 * out of its errors in the first place (`knex/db-errors.ts`); this is the net
 * behind it.
 */
export function createLogger(settings: LoggerSettings, destination?: DestinationStream): Logger {
  const options = {
    level: settings.level,
    ...(settings.base ? { base: settings.base } : {}),
    redact: { paths: LOG_REDACT_PATHS, censor: REDACTED },
    serializers: { err: maskedError },
    hooks: {
      logMethod(this: Logger, args: unknown[], method: (...args: unknown[]) => void) {
        method.apply(
          this,
          args.map((arg) => (typeof arg === 'string' ? maskSecrets(arg) : arg)),
        );
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** pino's error serializer (message and stack with their causes'), each string field masked. */
function maskedError(error: unknown): unknown {
  const serialized = stdSerializers.err(error as Error) as unknown;
  if (serialized === null || typeof serialized !== 'object') return typeof serialized === 'string' ? maskSecrets(serialized) : serialized;
  const fields = serialized as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (typeof value === 'string') fields[key] = maskSecrets(value);
  }
  return fields;
}
