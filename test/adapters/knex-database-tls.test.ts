import { execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnex } from '@logi/adapters';
import { PrivateMariadb } from '../support/private-services.js';

/** A CA, and certificates it signs: EC keys (fast to make), valid two days. */
function makeCertificates(dir: string) {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const key = (name: string) => openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', `${name}.key`);
  const ca = (name: string) => {
    key(name);
    openssl('req', '-x509', '-new', '-key', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`);
  };
  const signed = async (name: string, altNames: string) => {
    key(name);
    openssl('req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    await writeFile(path.join(dir, `${name}.ext`), `subjectAltName=${altNames}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  };
  return { ca, signed };
}

/**
 * DATABASE_URL's TLS options against a MariaDB with TLS on (issue 36, point 5): each ssl-mode does what the MariaDB
 * client's does, a client certificate reaches a user made REQUIRE X509, and nothing falls back to plain text.
 */
describe('DATABASE_URL TLS options against a MariaDB with TLS on', () => {
  let server: PrivateMariadb;
  let dir: string;
  let admin: Knex;
  const opened: Knex[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'db-tls-'));
    const certs = makeCertificates(dir);
    certs.ca('ca');
    certs.ca('other-ca');
    await certs.signed('localhost-server', 'DNS:localhost');
    await certs.signed('internal-server', 'DNS:db.internal');
    await certs.signed('client', 'DNS:client');
    await copyFile(path.join(dir, 'localhost-server.pem'), path.join(dir, 'server.pem'));
    await copyFile(path.join(dir, 'localhost-server.key'), path.join(dir, 'server.key'));
    server = await PrivateMariadb.start({
      grants: true,
      extra: [`--ssl-ca=${path.join(dir, 'ca.pem')}`, `--ssl-cert=${path.join(dir, 'server.pem')}`, `--ssl-key=${path.join(dir, 'server.key')}`],
    });
    admin = knexFactory({ client: 'mysql2', connection: { socketPath: server.socketPath, user: 'root', database: 'mysql' }, pool: { min: 0, max: 1 } });
    for (const statement of [
      "CREATE USER 'tls'@'%' IDENTIFIED BY 'pw' REQUIRE SSL",
      "GRANT ALL ON *.* TO 'tls'@'%'",
      "CREATE USER 'x509'@'%' IDENTIFIED BY 'pw' REQUIRE X509",
      "GRANT ALL ON *.* TO 'x509'@'%'",
    ])
      await admin.raw(statement);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(opened.map((knex) => knex.destroy()));
    await admin?.destroy();
    await server?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  const file = (name: string) => path.join(dir, name);
  const url = (user: string, options: Record<string, string>) => {
    const query = new URLSearchParams(options).toString();
    return `mysql://${user}:pw@localhost:${server.port}/mysql${query ? `?${query}` : ''}`;
  };
  /** The session's TLS version ('' on plain TCP), through a pool made from the URL as the service makes it. */
  const tlsVersion = async (databaseUrl: string): Promise<string> => {
    const knex = createKnex({ databaseUrl, dataDir: dir });
    opened.push(knex);
    const [rows] = (await knex.raw("SHOW SESSION STATUS LIKE 'Ssl_version'")) as [Array<{ Value: string }>];
    return rows[0]!.Value;
  };
  /** Why a pool made from the URL could not connect: the driver's code, and for a refused certificate, Node's reason. */
  const failure = async (databaseUrl: string): Promise<string> => {
    const error = await tlsVersion(databaseUrl).then(
      () => null,
      (caught: unknown) => caught as { code?: string; message?: string },
    );
    expect(error).not.toBeNull();
    // mysql2 gives every failed TLS handshake the code HANDSHAKE_SSL_ERROR and keeps Node's message.
    if (error!.code === 'HANDSHAKE_SSL_ERROR') return `TLS: ${String(error!.message)}`;
    return String(error!.code);
  };
  const UNTRUSTED = /^TLS: (self[- ]signed certificate in certificate chain|unable to verify the first certificate|unable to get local issuer certificate)$/;

  it('when ssl-ca is given, then the connection is TLS and the certificate is checked against it and the host name (VERIFY_IDENTITY)', async () => {
    expect(await tlsVersion(url('tls', { 'ssl-ca': file('ca.pem') }))).toMatch(/^TLSv1\.[23]$/);
    expect(await failure(url('tls', { 'ssl-ca': file('other-ca.pem') }))).toMatch(UNTRUSTED);
  });

  it('when no option is given, then it is plain TCP, and a user made REQUIRE SSL is refused (never TLS taken as granted)', async () => {
    expect(await failure(url('tls', {}))).toBe('ER_ACCESS_DENIED_ERROR');
    expect(await failure(url('tls', { 'ssl-mode': 'DISABLED' }))).toBe('ER_ACCESS_DENIED_ERROR');
  });

  it('when ssl-mode=REQUIRED, then it is TLS without a check of the certificate; VERIFY_CA without ssl-ca checks against the system CAs and refuses', async () => {
    expect(await tlsVersion(url('tls', { 'ssl-mode': 'REQUIRED' }))).toMatch(/^TLSv1\.[23]$/);
    expect(await failure(url('tls', { 'ssl-mode': 'VERIFY_CA' }))).toMatch(UNTRUSTED);
  });

  it('when a user is made REQUIRE X509, then ssl-cert and ssl-key reach it, and without them it is refused', async () => {
    expect(await tlsVersion(url('x509', { 'ssl-ca': file('ca.pem'), 'ssl-cert': file('client.pem'), 'ssl-key': file('client.key') }))).toMatch(/^TLSv1\.[23]$/);
    expect(await failure(url('x509', { 'ssl-ca': file('ca.pem') }))).toBe('ER_ACCESS_DENIED_ERROR');
  });

  it("when the server's certificate names another host, then VERIFY_IDENTITY refuses it and VERIFY_CA takes it", async () => {
    await copyFile(file('internal-server.pem'), file('server.pem'));
    await copyFile(file('internal-server.key'), file('server.key'));
    await admin.raw('FLUSH SSL');
    try {
      expect(await failure(url('tls', { 'ssl-ca': file('ca.pem') }))).toBe(
        "TLS: Hostname/IP does not match certificate's altnames: Host: localhost. is not in the cert's altnames: DNS:db.internal",
      );
      expect(await tlsVersion(url('tls', { 'ssl-mode': 'VERIFY_CA', 'ssl-ca': file('ca.pem') }))).toMatch(/^TLSv1\.[23]$/);
    } finally {
      await copyFile(file('localhost-server.pem'), file('server.pem'));
      await copyFile(file('localhost-server.key'), file('server.key'));
      await admin.raw('FLUSH SSL');
    }
  });
});
