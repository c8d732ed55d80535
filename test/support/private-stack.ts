import { randomBytes } from 'node:crypto';
import { createKnex } from '@logi/adapters';
import { ChildS3Server, PrivateMariadb, PrivateRedis } from './private-services.js';
import { S3RVER_ACCESS_KEY, S3RVER_SECRET_KEY } from './s3rver.js';
import { TEST_SECRETS_ENCRYPTION_KEYS } from './test-secret-key.js';

/**
 * The production profile's dependencies as private child processes of the
 * test (MariaDB, Redis, the S3 server), so that a test may pause them with
 * SIGSTOP: the shared MariaDB and Redis of the machine are never touched.
 */
export class PrivateStack {
  private constructor(
    readonly redis: PrivateRedis,
    readonly mariadb: PrivateMariadb,
    readonly s3: ChildS3Server,
    readonly env: Record<string, string>,
  ) {}

  static async start(): Promise<PrivateStack> {
    const [redis, mariadb, s3] = await Promise.all([PrivateRedis.start(), PrivateMariadb.start(), ChildS3Server.start()]);
    const database = 'logi_private';
    const admin = createKnex({ databaseUrl: mariadb.url('mysql'), dataDir: '/tmp' });
    try {
      await admin.raw(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    } finally {
      await admin.destroy();
    }
    const env = {
      DATABASE_URL: mariadb.url(database),
      REDIS_URL: redis.url,
      REDIS_PREFIX: `test-private-${randomBytes(4).toString('hex')}`,
      S3_ENDPOINT: s3.endPoint,
      S3_ACCESS_KEY: S3RVER_ACCESS_KEY,
      S3_SECRET_KEY: S3RVER_SECRET_KEY,
      S3_BUCKET: 'logi-private',
      SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_ENCRYPTION_KEYS,
    };
    return new PrivateStack(redis, mariadb, s3, env);
  }

  objectKeys(): Promise<string[]> {
    return this.s3.objectKeys(this.env.S3_BUCKET!);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.redis.kill(), this.mariadb.destroy(), this.s3.destroy()]);
  }
}
