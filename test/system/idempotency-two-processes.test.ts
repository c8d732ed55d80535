import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authHeaders, envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(ROOT, 'packages/api/src/main.ts');

/** A second API process on the first one's database, Redis and bucket; resolves with its address once it listens. */
function startSecondApi(env: Record<string, string>): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', METRICS_PORT: '0', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Kept, not printed: a passing test stays quiet; a process that dies says why in the failure.
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'API listening' && entry.url) resolve(entry.url);
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => reject(new Error(`second API exited with ${code}: ${stderr}`)));
  });
  return { child, url };
}

describe('Idempotency-Key across two API processes sharing Redis', () => {
  let first: TestApi;
  let second: { child: ChildProcess; url: Promise<string> };
  beforeAll(async () => {
    first = await startTestApi({}, { profile: 'production', label: 'idem-two' });
    second = startSecondApi({ ...first.stack!.env, DATA_DIR: first.dataDir });
    await second.url;
  });
  afterAll(async () => {
    if (second?.child.exitCode === null) {
      const exited = new Promise((resolve) => second.child.once('exit', resolve));
      // Its graceful stop is tested elsewhere; here it would only wait for idle keep-alive connections.
      second.child.kill('SIGKILL');
      await exited;
    }
    await first?.stop();
  });

  it('when the retry of an upload reaches the other process, then it gets the first answer replayed and nothing is stored again', async () => {
    const key = randomUUID();
    const content = Buffer.concat([PDF_BYTES, Buffer.from(randomBytes(16).toString('hex'))]);
    const send = (base: string) => {
      const { body, contentType } = multipart([
        { name: 'files', filename: 'cmr.pdf', content },
        { name: 'category_id', content: '1' },
      ]);
      return fetch(`${base}/orders/3001/files`, {
        method: 'POST',
        body,
        headers: { ...authHeaders('baltic'), 'Content-Type': contentType, 'Idempotency-Key': key },
      });
    };
    const answer = await send(first.base);
    expect(answer.status).toBe(201);
    const body = await envelopeOf(answer);
    const rows = await first.knex('order_files').select('id', 'storage_key');
    const objects = await first.objectKeys();
    expect(rows).toHaveLength(1);
    expect(objects).toEqual([rows[0].storage_key]);

    const retry = await send(`${await second.url}/v1`);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(await envelopeOf(retry)).toEqual(body);
    expect(await first.knex('order_files').select('id', 'storage_key')).toEqual(rows);
    expect(await first.objectKeys()).toEqual(objects);
  });
});
