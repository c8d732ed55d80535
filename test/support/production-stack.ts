import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client } from 'minio';
import { createKnex } from '@logi/adapters';
import { S3RVER_ACCESS_KEY, S3RVER_SECRET_KEY, TestS3Server } from './s3rver.js';
import { WorkerProcess } from './worker-process.js';
import { TEST_SECRETS_ENCRYPTION_KEYS } from './test-secret-key.js';

const MARIADB_ADMIN_URL = 'mysql://root@127.0.0.1:3306/mysql';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The production profile for one test file: a MariaDB database of its own,
 * Redis under a unique prefix, an S3 server (s3rver) and a real worker process.
 */
/** How objectKeys names a multipart upload left incomplete. */
export const INCOMPLETE_UPLOAD = '(incomplete multipart upload)';

export class ProductionStack {
  readonly workers: WorkerProcess[] = [];

  private constructor(
    readonly env: Record<string, string>,
    readonly s3: TestS3Server,
    private readonly database: string,
  ) {}

  static async start(label: string): Promise<ProductionStack> {
    const suffix = randomBytes(4).toString('hex');
    const database = `logi_api_${label.replace(/\W/g, '_')}_${suffix}`;
    await withAdmin((admin) => admin.raw(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`));
    const s3 = await TestS3Server.start();
    const env = {
      DATABASE_URL: `mysql://root@127.0.0.1:3306/${database}`,
      REDIS_URL,
      REDIS_PREFIX: `test-${label}-${suffix}`,
      S3_ENDPOINT: s3.endPoint,
      S3_ACCESS_KEY: S3RVER_ACCESS_KEY,
      S3_SECRET_KEY: S3RVER_SECRET_KEY,
      S3_BUCKET: `logi-${suffix}`,
      SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_ENCRYPTION_KEYS,
    };
    return new ProductionStack(env, s3, database);
  }

  /** Starts a worker (another one, if one runs already); call after the schema exists. */
  async startWorker(dataDir: string, env: Record<string, string> = {}, options: { runUnder?: string[] } = {}): Promise<WorkerProcess> {
    const worker = await WorkerProcess.start({ ...this.env, DATA_DIR: dataDir, ...env }, options);
    this.workers.push(worker);
    return worker;
  }

  /**
   * Keys of every object in the bucket, and each multipart upload begun and neither completed nor aborted as
   * `<key> (incomplete multipart upload)`: an upload written while it arrives (ADR 0056) must leave neither behind.
   */
  async objectKeys(): Promise<string[]> {
    const client = new Client({
      endPoint: '127.0.0.1',
      port: Number(new URL(this.s3.endPoint).port),
      useSSL: false,
      accessKey: S3RVER_ACCESS_KEY,
      secretKey: S3RVER_SECRET_KEY,
      pathStyle: true,
    });
    const keys: string[] = [];
    if (!(await client.bucketExists(this.env.S3_BUCKET!))) return keys;
    for await (const item of client.listObjectsV2(this.env.S3_BUCKET!, '', true)) {
      if ((item as { name?: string }).name) keys.push((item as { name: string }).name);
    }
    const incomplete = await client.listIncompleteUploadsQuery(this.env.S3_BUCKET!, '', '', '', '');
    for (const upload of incomplete.uploads) keys.push(`${upload.key} ${INCOMPLETE_UPLOAD}`);
    return keys.sort();
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.stop()));
    await this.s3.destroy();
    await withAdmin((admin) => admin.raw(`DROP DATABASE IF EXISTS \`${this.database}\``));
    await deleteRedisKeys(this.env.REDIS_URL!, `${this.env.REDIS_PREFIX}:*`);
  }
}

/** Queues and rate-limit counters of this run, so Redis is left as it was found. */
export async function deleteRedisKeys(url: string, pattern: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function withAdmin<T>(work: (admin: ReturnType<typeof createKnex>) => Promise<T>): Promise<T> {
  const admin = createKnex({ databaseUrl: MARIADB_ADMIN_URL, dataDir: '/tmp' });
  try {
    return await work(admin);
  } finally {
    await admin.destroy();
  }
}
