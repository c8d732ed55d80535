import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { NORTH, repositoryFixture, SOUTH } from '../adapters/knex-repository.fixture.js';
import { cli } from '../support/cli-runner.js';
import { exportRow } from '../support/export-rows.js';

/** A table the CLI printed: the header's columns, then each row's cells (columns are two spaces or more apart). */
function parseTable(stdout: string): Array<Record<string, string>> {
  const [header, ...rows] = stdout.trimEnd().split('\n');
  const columns = header!.split(/ {2,}/);
  return rows.map((row) => Object.fromEntries(row.split(/ {2,}/).map((cell, index) => [columns[index]!, cell])));
}

const NOW = Math.floor(Date.now() / 1000);

describe('pnpm cli exports:list (embedded SQLite)', { timeout: 120_000 }, () => {
  let dataDir: string;
  let knex: Knex;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-cli-exports-'));
    env = { DATA_DIR: dataDir };
    knex = createKnex({ databaseUrl: null, dataDir });
    await migrateLatest(knex);
    await loadFixtures(knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    const row = (id: number, directory: string, extra: Record<string, unknown>) => exportRow(directory, { id, created: NOW - 600, ...extra });
    await knex('exports').insert([
      row(1, NORTH, { status: 'succeeded', total: 4, done: 4, attempt: 1, finished: NOW - 300, size: 12_345, sha256: 'a'.repeat(64), expires: NOW + 3600 }),
      row(2, SOUTH, { status: 'failed', total: 2, done: 1, attempt: 3, finished: NOW - 200, error: 'The archive could not be stored: Storage unavailable' }),
      row(3, NORTH, { status: 'running', total: 9, done: 5, attempt: 2, lease_until: Date.now() + 30_000 }),
    ]);
  });

  afterAll(async () => {
    await knex?.destroy();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('when exports:list runs, then the newest exports come first with status, progress, attempts and size, and failures say why on stderr', async () => {
    const run = await cli(['exports:list'], env);
    expect(run.code).toBe(0);
    const rows = parseTable(run.stdout);
    expect(rows.map((r) => [r.ID, r.DIRECTORY, r.STATUS, r.DONE, r.ATTEMPT, r.SIZE])).toEqual([
      ['3', NORTH, 'running', '5/9', '2', '-'],
      ['2', SOUTH, 'failed', '1/2', '3', '-'],
      ['1', NORTH, 'succeeded', '4/4', '1', '12345'],
    ]);
    expect(Date.parse(rows[2]!.EXPIRES!) / 1000).toBe(NOW + 3600);
    expect(rows[0]!.LEASE_UNTIL).not.toBe('-');
    expect(run.stderr).toContain('export 2: The archive could not be stored: Storage unavailable');
    const north = await cli(['exports:list', '--directory', NORTH, '--limit', '1'], env);
    expect(parseTable(north.stdout).map((r) => r.ID)).toEqual(['3']);
  });

  it('when --limit is not a whole number from 1 to 1000, then the command line is refused (exit 2) naming it', async () => {
    const run = await cli(['exports:list', '--limit', '0'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--limit');
  });
});
