import { accessSync, constants } from 'node:fs';

/**
 * TLS to MariaDB/MySQL, as the options of DATABASE_URL (and of each DATABASE_READ_URL entry) name it, with the values
 * of the MariaDB and MySQL clients' `--ssl-mode`:
 * - DISABLED: no TLS (the default when no ssl-* option is given);
 * - REQUIRED: encrypted, the server's certificate not checked;
 * - VERIFY_CA: encrypted, the certificate signed by `ssl-ca` (else the system's CAs);
 * - VERIFY_IDENTITY: VERIFY_CA, and the certificate names the host of the URL (the default once an ssl-* file is given).
 * `ssl-cert` and `ssl-key` (PEM files, both or neither) are the client's certificate, for a user created `REQUIRE X509`.
 */
export type DatabaseSslMode = 'DISABLED' | 'REQUIRED' | 'VERIFY_CA' | 'VERIFY_IDENTITY';

export interface DatabaseTls {
  mode: DatabaseSslMode;
  /** PEM file of the CA(s) the server's certificate must chain to; null: the system's. */
  caFile: string | null;
  certFile: string | null;
  keyFile: string | null;
}

/** The options a database URL may carry; any other stops the start (an option silently ignored would be TLS not used). */
export const DATABASE_URL_OPTIONS = ['ssl-mode', 'ssl-ca', 'ssl-cert', 'ssl-key'] as const;

const MODES: readonly DatabaseSslMode[] = ['DISABLED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'];

/** A database URL's TLS options; throws an Error whose message says what is wrong (never the URL: it holds a password). */
export function databaseTlsOf(databaseUrl: string): DatabaseTls {
  const params = new URL(databaseUrl).searchParams;
  for (const key of new Set(params.keys())) {
    if (!(DATABASE_URL_OPTIONS as readonly string[]).includes(key))
      throw new Error(`has the option "${key}", which is not known (known: ${DATABASE_URL_OPTIONS.join(', ')})`);
    if (params.getAll(key).length > 1) throw new Error(`gives the option "${key}" more than once`);
  }
  const file = (key: string): string | null => {
    const value = params.get(key);
    if (value === null) return null;
    if (value === '') throw new Error(`has an empty "${key}" (a path to a PEM file)`);
    try {
      accessSync(value, constants.R_OK);
    } catch {
      throw new Error(`names "${key}=${value}", which cannot be read`);
    }
    return value;
  };
  const caFile = file('ssl-ca');
  const certFile = file('ssl-cert');
  const keyFile = file('ssl-key');
  if ((certFile === null) !== (keyFile === null)) throw new Error('needs both "ssl-cert" and "ssl-key" (the client certificate and its key), or neither');
  const rawMode = params.get('ssl-mode');
  const anyFile = caFile !== null || certFile !== null;
  if (rawMode === null) return { mode: anyFile ? 'VERIFY_IDENTITY' : 'DISABLED', caFile, certFile, keyFile };
  const mode = rawMode.toUpperCase() as DatabaseSslMode;
  if (!MODES.includes(mode)) {
    const hint = mode === ('PREFERRED' as string) ? ' (PREFERRED would fall back to plain text without a word: say REQUIRED or DISABLED)' : '';
    throw new Error(`has "ssl-mode=${rawMode}", which is not one of ${MODES.join(', ')}${hint}`);
  }
  if (mode === 'DISABLED' && anyFile) throw new Error('has "ssl-mode=DISABLED" with ssl-* files: say which one is meant');
  return { mode, caFile, certFile, keyFile };
}
