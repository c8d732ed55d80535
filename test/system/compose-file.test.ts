import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig, requireSecretKeys } from '@logi/config';

/**
 * docker-compose.yml as operators run it. `docker-compose config` (scripts/test.sh) checks its
 * form; this checks what that cannot: every image it pulls names one exact version, so `up`
 * starts the same software next year as today (no `latest`, no `7.4` that moves to 7.4.x+1,
 * no tag at all), none is a MinIO server image (removed from Docker Hub, the project archived),
 * and the S3 server is the one the app is pointed at, with the app's credentials and region,
 * health-checked before the processes that use it start. Nothing is started here.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');
/** The operator's credentials file (git ignores it) and the committed example it is copied from. */
const ENV_FILE = 'compose.env';
const ENV_EXAMPLE = path.join(ROOT, 'compose.env.example');

interface Service {
  image?: string;
  command?: string | string[];
  env_file?: string | string[];
  build?: unknown;
  environment?: Record<string, string> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: unknown; disable?: boolean };
}

interface ComposeFile {
  services: Record<string, Service>;
  'x-app-env': Record<string, string>;
}

async function loadCompose(): Promise<ComposeFile> {
  // `<<: *app-env` is a YAML 1.1 merge key, as docker-compose reads it.
  return parse(await readFile(COMPOSE_FILE, 'utf8'), { merge: true }) as ComposeFile;
}

/** An image reference's repository, tag and digest: `[registry[:port]/]name[:tag][@digest]`. */
function imageParts(reference: string): { repository: string; tag: string | null; digest: string | null } {
  const [withoutDigest, digest = null] = reference.split('@') as [string, string?];
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon === -1
    ? { repository: withoutDigest, tag: null, digest }
    : { repository: withoutDigest.slice(0, colon), tag: withoutDigest.slice(colon + 1), digest };
}

/**
 * Pinned: a content digest, or a tag that starts with a full version (major.minor.patch, an
 * optional `v`), optionally followed by a variant such as `-alpine`. `latest`, `7`, `7.4` and
 * `7.4-alpine` float to whatever is published next.
 */
function isPinned(reference: string): boolean {
  const { tag, digest } = imageParts(reference);
  if (digest !== null) return /^sha256:[0-9a-f]{64}$/.test(digest);
  return tag !== null && /^v?\d+\.\d+\.\d+(?:[-.+_][0-9A-Za-z][0-9A-Za-z._-]*)?$/.test(tag);
}

function isMinioServer(reference: string): boolean {
  return /(?:^|\/)minio\/minio$/.test(imageParts(reference).repository);
}

function environmentOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) return env;
  return Object.fromEntries(env.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

/** `KEY=value` lines of an env file, as docker-compose reads them (comments and blank lines skipped). */
async function readEnvFile(file: string): Promise<Record<string, string>> {
  const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line));
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

/** What a service's process sees with the example credentials: the env file's variables, then its own `environment`. */
async function runtimeEnvironmentOf(service: Service): Promise<Record<string, string>> {
  const files = service.env_file === undefined ? [] : [service.env_file].flat();
  const fromFiles = files.includes(ENV_FILE) ? await readEnvFile(ENV_EXAMPLE) : {};
  return { ...fromFiles, ...environmentOf(service) };
}

/** Variable names that hold a credential. */
const CREDENTIAL_NAME = /PASSWORD|SECRET|ACCESS_KEY|_TOKEN|^DATABASE(_READ)?_URL$|^REDIS_URL$/;
/** Names that look like one and are not: a flag. */
const NOT_CREDENTIALS = new Set(['MARIADB_RANDOM_ROOT_PASSWORD']);

function dependenciesOf(service: Service): Record<string, { condition?: string }> {
  const deps = service.depends_on ?? {};
  return Array.isArray(deps) ? Object.fromEntries(deps.map((name) => [name, {}])) : deps;
}

describe('docker-compose.yml', () => {
  it.each([
    ['mariadb:11.4.12', true],
    ['redis:7.4.11-alpine', true],
    ['versity/versitygw:v1.8.0', true],
    ['ghcr.io/versity/versitygw:v1.8.0', true],
    ['localhost:5000/app:1.2.3', true],
    [`redis@sha256:${'a'.repeat(64)}`, true],
    ['redis:latest', false],
    ['redis', false],
    ['redis:7', false],
    ['redis:7.4', false],
    ['redis:7.4-alpine', false],
    ['localhost:5000/app', false],
    ['minio/minio:RELEASE.2025-04-22T22-12-26Z', false],
  ])('when an image is %s, then it counts as pinned: %s', (reference, pinned) => {
    expect(isPinned(reference)).toBe(pinned);
  });

  it('when a service pulls an image, then the image is pinned to an exact version and is no MinIO server', async () => {
    const { services } = await loadCompose();
    const pulled = Object.entries(services).filter(([, service]) => service.build === undefined);
    expect(pulled.map(([name]) => name)).toEqual(expect.arrayContaining(['mariadb', 'redis', 's3']));
    const unpinned = pulled.filter(([, service]) => typeof service.image !== 'string' || !isPinned(service.image));
    expect(unpinned.map(([name, service]) => `${name}: ${service.image}`)).toEqual([]);
    const minio = Object.entries(services).filter(([, service]) => typeof service.image === 'string' && isMinioServer(service.image));
    expect(minio.map(([name, service]) => `${name}: ${service.image}`)).toEqual([]);
  });

  it('when a service waits for another to be healthy, then that one has a health check', async () => {
    const { services } = await loadCompose();
    const unchecked: string[] = [];
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(dependenciesOf(service))) {
        if (condition !== 'service_healthy') continue;
        const check = services[dependency]?.healthcheck;
        if (!check || check.disable || check.test === undefined) unchecked.push(`${name} -> ${dependency}`);
      }
    }
    expect(unchecked).toEqual([]);
  });

  it('when the app is pointed at S3, then that service takes its credentials and region and the API and workers wait for its health check', async () => {
    const compose = await loadCompose();
    const app = await runtimeEnvironmentOf(compose.services.api!);
    const endpoint = new URL(app.S3_ENDPOINT!);
    const server = compose.services[endpoint.hostname];
    expect(server, `no service named ${endpoint.hostname} (S3_ENDPOINT)`).toBeDefined();
    const env = await runtimeEnvironmentOf(server!);
    // Versity S3 Gateway: the root account from the environment, the S3 API on VGW_PORT.
    expect({
      accessKey: env.ROOT_ACCESS_KEY,
      secretKey: env.ROOT_SECRET_KEY,
      region: env.VGW_REGION,
      port: env.VGW_PORT?.split(':').at(-1),
    }).toEqual({ accessKey: app.S3_ACCESS_KEY, secretKey: app.S3_SECRET_KEY, region: app.S3_REGION, port: endpoint.port });
    expect(app.S3_SECRET_KEY).toBeTruthy();
    // Path-style S3 with the bucket the app makes itself: no bucket or key is made beforehand.
    expect(app.S3_BUCKET).toMatch(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/);
    for (const name of ['api', 'worker']) {
      expect(compose.services[name]?.environment, name).toMatchObject({ S3_ENDPOINT: app.S3_ENDPOINT, S3_REGION: app.S3_REGION });
      expect(dependenciesOf(compose.services[name]!)[endpoint.hostname], name).toEqual({ condition: 'service_healthy' });
    }
  });

  it('when compose starts the services, then no credential is written in the YAML: each comes from compose.env, which git ignores', async () => {
    const compose = await loadCompose();
    const text = await readFile(COMPOSE_FILE, 'utf8');
    // No variable that holds a credential is given a value in the file, and no URL carries a password.
    const inYaml = Object.entries(compose.services).flatMap(([name, service]) =>
      Object.keys(environmentOf(service))
        .filter((key) => CREDENTIAL_NAME.test(key) && !NOT_CREDENTIALS.has(key))
        .map((key) => `${name}: ${key}`),
    );
    expect(inYaml).toEqual([]);
    expect(text).not.toMatch(/:\/\/[^\s/:@]+:[^\s/@]+@/);
    // The services that need them read the file, and the example holds every one they need.
    for (const name of ['mariadb', 'redis', 's3', 'migrate', 'api', 'worker']) expect([compose.services[name]?.env_file].flat(), name).toContain(ENV_FILE);
    const example = await readEnvFile(ENV_EXAMPLE);
    expect(Object.keys(example).sort()).toEqual([
      'DATABASE_URL',
      'MARIADB_PASSWORD',
      'REDIS_PASSWORD',
      'REDIS_URL',
      'ROOT_ACCESS_KEY',
      'ROOT_SECRET_KEY',
      'S3_ACCESS_KEY',
      'S3_SECRET_KEY',
      'SECRETS_ENCRYPTION_KEYS',
    ]);
    // The database account is the one MariaDB creates, with the same password.
    const database = new URL(example.DATABASE_URL!);
    const mariadb = await runtimeEnvironmentOf(compose.services.mariadb!);
    expect({ user: database.username, password: database.password, db: database.pathname.slice(1), host: database.hostname }).toEqual({
      user: mariadb.MARIADB_USER,
      password: mariadb.MARIADB_PASSWORD,
      db: mariadb.MARIADB_DATABASE,
      host: 'mariadb',
    });
    // The encryption key's placeholder cannot be used by mistake: the processes refuse it, naming the variable.
    expect(() => loadConfig({ DATABASE_URL: example.DATABASE_URL!, SECRETS_ENCRYPTION_KEYS: example.SECRETS_ENCRYPTION_KEYS! })).toThrow(
      /^Configuration error: SECRETS_ENCRYPTION_KEYS /,
    );
    // The real file stays out of git and out of the image's build context.
    const ignored = spawnSync('git', ['check-ignore', '-q', ENV_FILE], { cwd: ROOT });
    expect(ignored.status, 'git check-ignore compose.env').toBe(0);
    expect((await readFile(path.join(ROOT, '.dockerignore'), 'utf8')).split('\n')).toContain(ENV_FILE);
  });

  it('when compose starts Redis, then it asks for the password of compose.env, its health check gives it, and every REDIS_URL carries it', async () => {
    const compose = await loadCompose();
    const redis = compose.services.redis!;
    const password = (await runtimeEnvironmentOf(redis)).REDIS_PASSWORD;
    expect(password).toBeTruthy();
    // `$$` is compose's escape of a literal `$`: the container's shell expands it from the env file, not compose from the host.
    expect([redis.command].flat().join(' ')).toMatch(/\bredis-server\b.*--requirepass "\$\$REDIS_PASSWORD"/);
    expect([redis.healthcheck?.test].flat().join(' ')).toMatch(/REDISCLI_AUTH="\$\$REDIS_PASSWORD" redis-cli ping/);
    const withRedis: string[] = [];
    for (const [name, service] of Object.entries(compose.services)) {
      const url = (await runtimeEnvironmentOf(service)).REDIS_URL;
      if (url === undefined) continue;
      withRedis.push(name);
      expect({ name, host: new URL(url).hostname, password: decodeURIComponent(new URL(url).password) }).toEqual({ name, host: 'redis', password });
    }
    expect(withRedis).toEqual(expect.arrayContaining(['migrate', 'api', 'worker']));
  });

  it('when compose starts the API and the worker, then both get SECRETS_ENCRYPTION_KEYS, which their production start requires', async () => {
    const compose = await loadCompose();
    const key = `k20261128-0a0b:${Buffer.alloc(32, 1).toString('base64')}`;
    for (const name of ['api', 'worker']) {
      const env = await runtimeEnvironmentOf(compose.services[name]!);
      expect(env.SECRETS_ENCRYPTION_KEYS, name).toBeTruthy();
      expect(() => requireSecretKeys(loadConfig({ ...env, SECRETS_ENCRYPTION_KEYS: '' }))).toThrow(/^Configuration error: SECRETS_ENCRYPTION_KEYS must be set/);
      // With the placeholder replaced by a key, the configuration is complete.
      expect(() => requireSecretKeys(loadConfig({ ...env, SECRETS_ENCRYPTION_KEYS: key }))).not.toThrow();
    }
  });
});
