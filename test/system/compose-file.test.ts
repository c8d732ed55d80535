import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * docker-compose.yml as operators run it. `docker-compose config` (scripts/test.sh) checks its
 * form; this checks what that cannot: every image it pulls names one exact version, so `up`
 * starts the same software next year as today (no `latest`, no `7.4` that moves to 7.4.x+1,
 * no tag at all), none is a MinIO server image (removed from Docker Hub, the project archived),
 * and the S3 server is the one the app is pointed at, with the app's credentials and region,
 * health-checked before the processes that use it start. Nothing is started here.
 */
const COMPOSE_FILE = path.resolve(import.meta.dirname, '../../docker-compose.yml');

interface Service {
  image?: string;
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
    const app = compose['x-app-env'];
    const endpoint = new URL(app.S3_ENDPOINT!);
    const server = compose.services[endpoint.hostname];
    expect(server, `no service named ${endpoint.hostname} (S3_ENDPOINT)`).toBeDefined();
    const env = environmentOf(server!);
    // Versity S3 Gateway: the root account from the environment, the S3 API on VGW_PORT.
    expect({
      accessKey: env.ROOT_ACCESS_KEY,
      secretKey: env.ROOT_SECRET_KEY,
      region: env.VGW_REGION,
      port: env.VGW_PORT?.split(':').at(-1),
    }).toEqual({ accessKey: app.S3_ACCESS_KEY, secretKey: app.S3_SECRET_KEY, region: app.S3_REGION, port: endpoint.port });
    // Path-style S3 with the bucket the app makes itself: no bucket or key is made beforehand.
    expect(app.S3_BUCKET).toMatch(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/);
    for (const name of ['api', 'worker']) {
      expect(compose.services[name]?.environment, name).toMatchObject({ S3_ENDPOINT: app.S3_ENDPOINT, S3_REGION: app.S3_REGION });
      expect(dependenciesOf(compose.services[name]!)[endpoint.hostname], name).toEqual({ condition: 'service_healthy' });
    }
  });
});
