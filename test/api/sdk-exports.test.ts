import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Export } from '@logi/client';
import { PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { sdkFor } from '../support/sdk-client.js';

/** The SDK's exports: create, wait with progress, download into a stream, and the export-then-follow pattern. */
let api: TestApi;
let dir: string;

beforeAll(async () => {
  api = await startTestApi({ EVENTS_PUBLISH_INTERVAL_MS: '50' }, { label: 'sdk-exports' });
  dir = await mkdtemp(path.join(tmpdir(), 'logi-sdk-exports-'));
});

afterAll(async () => {
  await api?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe(`SDK exports (${PROFILE})`, () => {
  it('when an export is created, waited for and downloaded into a file stream, then the file is the archive its sha256 names, and the feed follows from its cursor', async () => {
    const sdk = sdkFor(api, 'baltic');
    const created = await sdk.exports.create({ filters: { search: 'BH' }, documents: ['pdf', 'ubl'] });
    expect(created.status).toBe('queued');
    const seen: Export[] = [];
    const done = await sdk.exports.wait(created.id, { intervalMs: 50, onProgress: (item) => seen.push(item) });
    expect(done.status).toBe('succeeded');
    expect(seen.every((item) => item.status === 'queued' || item.status === 'running')).toBe(true);
    const file = path.join(dir, 'export.zip');
    const written = await sdk.exports.download(done.id, createWriteStream(file));
    const bytes = await readFile(file);
    expect(written).toEqual({ bytes: done.size, etag: `"${done.sha256}"` });
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(done.sha256);
    expect((await sdk.exports.list()).map((item) => item.id)).toContain(done.id);
    // The export's own event is past its cursor.
    const page = await sdk.events.list({ after: created.events_cursor, types: ['export.succeeded'], wait: 5 });
    expect(page.events.map((event) => (event.data.object as { id: number }).id)).toContain(done.id);
  });
});
