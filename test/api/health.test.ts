import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { Tokens } from '@logi/api';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { replaceDirectoryWithFile } from '../support/break-storage.js';
import { freePort } from '../support/free-port.js';

let api: TestApi;
beforeAll(async () => {
  // A limit of one: any request the limiter counted would be refused from the second on.
  api = await startTestApi({ RATE_LIMIT_MAX: '1' }, { profile: 'embedded' });
});
afterAll(async () => {
  await api?.stop();
});

describe('GET /health/live', () => {
  it('when the process answers, then 200 envelope without credentials', async () => {
    const response = await fetch(`${api.root}/health/live`);
    expect(response.status).toBe(200);
    const body = await envelopeOf(response);
    expect(body).toMatchObject({ status: 200, message: 'OK', data: { status: 'live' } });
    expect(body.data.uptime_seconds).toBeGreaterThanOrEqual(0);
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('GET /health/ready (embedded profile)', () => {
  it('when every dependency answers, then 200 with a check per dependency, the PDF renderer included in the embedded profile', async () => {
    const response = await fetch(`${api.root}/health/ready`);
    expect(response.status).toBe(200);
    expect(await envelopeOf(response)).toEqual({
      status: 200,
      message: 'OK',
      data: { checks: { database: 'ok', storage: 'ok', job_queue: 'ok', pdf_renderer: 'ok' } },
    });
  });

  it('when called many times with a rate limit of 1, then every call is 200 and none is counted', async () => {
    for (let i = 0; i < 10; i += 1) {
      for (const probe of ['/health/live', '/health/ready']) {
        const response = await fetch(`${api.root}${probe}`);
        expect(response.status).toBe(200);
        expect(response.headers.get('x-ratelimit-limit')).toBeNull();
        await response.arrayBuffer();
      }
    }
    // The limiter is still untouched: the first counted request of this client goes through.
    expect((await api.call('/orders/file-categories')).status).toBe(200);
    expect((await api.call('/orders/file-categories')).status).toBe(429);
  });

  it('when the storage cannot be written, then 503 naming storage, with Retry-After, and 200 again once it heals', async () => {
    const restore = await replaceDirectoryWithFile(path.join(api.dataDir, 'files'));
    try {
      const response = await fetch(`${api.root}/health/ready`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      const body = await envelopeOf(response);
      expect(body.message).toBe('Service Unavailable: storage');
      expect(body.data).toEqual({ checks: { database: 'ok', storage: 'failed', job_queue: 'ok', pdf_renderer: 'ok' }, failing: ['storage'] });
      expect(JSON.stringify(body)).not.toContain(api.dataDir);
    } finally {
      await restore();
    }
    expect((await fetch(`${api.root}/health/ready`)).status).toBe(200);
  });

  it('when HEAD is sent, then it answers like GET without a body', async () => {
    const response = await fetch(`${api.root}/health/live`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });
});

describe('GET /health/ready with the database gone (embedded profile)', () => {
  let broken: TestApi;
  beforeAll(async () => {
    broken = await startTestApi({}, { profile: 'embedded' });
  });
  afterAll(async () => {
    await broken?.stop();
  });

  it('when the database connection is destroyed, then 503 naming the database, while live stays 200', async () => {
    await broken.container.get<Knex>(Tokens.Knex).destroy();
    const response = await fetch(`${broken.root}/health/ready`);
    expect(response.status).toBe(503);
    const body = await envelopeOf(response);
    expect(body.message).toBe('Service Unavailable: database');
    expect(body.data.checks).toMatchObject({ database: 'failed', storage: 'ok', job_queue: 'ok' });
    expect(body.data.failing).toEqual(['database']);
    expect((await fetch(`${broken.root}/health/live`)).status).toBe(200);
  });
});

describe('GET /health/ready in the production profile (MariaDB, Redis, S3)', () => {
  it('when everything answers, then the queue and Redis are checked instead of an in-process renderer; when S3 goes away, 503 naming storage', async () => {
    const production = await startTestApi({}, { profile: 'production', label: 'health', worker: false });
    try {
      const response = await fetch(`${production.root}/health/ready`);
      const body = await envelopeOf(response);
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.data).toEqual({ checks: { database: 'ok', storage: 'ok', job_queue: 'ok', redis: 'ok' } });

      await production.stack!.s3.stop();
      const down = await fetch(`${production.root}/health/ready`);
      expect(down.status).toBe(503);
      const downBody = await envelopeOf(down);
      expect(downBody.data.failing).toEqual(['storage']);
      expect(downBody.message).toBe('Service Unavailable: storage');
    } finally {
      await production.stop();
    }
  });

  it('when nothing listens at REDIS_URL, then 503 naming the queue and Redis, within the check timeout', async () => {
    const closedPort = await freePort();
    const noRedis = await startTestApi({ REDIS_URL: `redis://127.0.0.1:${closedPort}` }, { profile: 'embedded' });
    try {
      const started = Date.now();
      const response = await fetch(`${noRedis.root}/health/ready`);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(response.status).toBe(503);
      const body = await envelopeOf(response);
      expect(body.data.failing).toEqual(['job_queue', 'redis']);
      expect(body.message).toBe('Service Unavailable: job_queue, redis');
      expect(body.data.checks).toMatchObject({ database: 'ok', storage: 'ok' });
      expect(['failed', 'timeout']).toContain(body.data.checks.redis);
    } finally {
      await noRedis.stop();
    }
  });
});
