import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { NORTH, repositoryFixture, SOUTH } from '../adapters/knex-repository.fixture.js';
import { cli } from '../support/cli-runner.js';

/** A table the CLI printed: the header's columns, then each row's cells (columns are two spaces or more apart). */
function parseTable(stdout: string): Array<Record<string, string>> {
  const [header, ...rows] = stdout.trimEnd().split('\n');
  const columns = header!.split(/ {2,}/);
  return rows.map((row) => Object.fromEntries(row.split(/ {2,}/).map((cell, index) => [columns[index]!, cell])));
}

const NOW = Math.floor(Date.now() / 1000);

describe('pnpm cli webhooks:* and events:status (embedded SQLite)', { timeout: 120_000 }, () => {
  let dataDir: string;
  let knex: Knex;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-cli-webhooks-'));
    env = { DATA_DIR: dataDir };
    knex = createKnex({ databaseUrl: null, dataDir });
    await migrateLatest(knex);
    await loadFixtures(knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    const endpoint = (id: number, directory: string, extra: Record<string, unknown>) => ({
      id,
      directory,
      url: `https://hooks.example.com/${id}`,
      event_types: '[]',
      description: null,
      enabled: 1,
      disabled_reason: null,
      secret: 'whsec_c2VjcmV0',
      created: NOW - 10_000,
      ...extra,
    });
    await knex('webhook_endpoints').insert([
      endpoint(1, NORTH, {}),
      endpoint(2, SOUTH, { enabled: 0, disabled_reason: 'Disabled after 120 hours in which every delivery failed.', failing_since: NOW - 130 * 3600 }),
    ]);
    const attempt = (id: number, endpointId: number, status: string, extra: Record<string, unknown> = {}) => ({
      id,
      endpoint_id: endpointId,
      event_id: 100 + id,
      event_type: 'invoice.updated',
      attempt: 1,
      status,
      response_status: status === 'succeeded' ? 200 : null,
      error: null,
      created: NOW - 60,
      next_attempt_at: null,
      ...extra,
    });
    await knex('webhook_deliveries').insert([
      attempt(1, 1, 'succeeded'),
      attempt(2, 1, 'failed', { response_status: 500, error: 'The endpoint answered 500.', next_attempt_at: NOW + 5 }),
      attempt(3, 1, 'pending', { attempt: 2, next_attempt_at: NOW + 5 }),
      attempt(4, 2, 'failed', { error: 'timed out after 10000 ms', created: NOW - 2 * 86_400 }),
    ]);
  });

  afterAll(async () => {
    await knex?.destroy();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("when webhooks:list runs, then each endpoint shows its state, pending attempts, the last day's failures and successes, and why it is disabled", async () => {
    const run = await cli(['webhooks:list'], env);
    expect(run.code).toBe(0);
    const rows = parseTable(run.stdout);
    expect(rows.map((row) => [row.ID, row.DIRECTORY, row.STATE, row.PENDING, row.FAILED_24H, row.OK_24H, row.URL])).toEqual([
      ['1', NORTH, 'enabled', '1', '1', '1', 'https://hooks.example.com/1'],
      ['2', SOUTH, 'disabled', '0', '0', '0', 'https://hooks.example.com/2'],
    ]);
    expect(rows[0]!.FAILING_SINCE).toBe('-');
    expect(Date.parse(rows[1]!.FAILING_SINCE!) / 1000).toBe(NOW - 130 * 3600);
    expect(run.stderr).toContain('endpoint 2: Disabled after 120 hours in which every delivery failed.');
    const north = await cli(['webhooks:list', '--directory', NORTH], env);
    expect(parseTable(north.stdout).map((row) => row.ID)).toEqual(['1']);
  });

  it('when webhooks:deliveries runs, then the latest attempts come newest first with their answers; an unknown endpoint fails', async () => {
    const run = await cli(['webhooks:deliveries', '--endpoint', '1'], env);
    expect(run.code).toBe(0);
    expect(parseTable(run.stdout).map((row) => [row.ID, row.STATUS, row.HTTP, row.ATTEMPT, row.ERROR ?? ''])).toEqual([
      ['3', 'pending', '-', '2', ''],
      ['2', 'failed', '500', '1', 'The endpoint answered 500.'],
      ['1', 'succeeded', '200', '1', ''],
    ]);
    const missing = await cli(['webhooks:deliveries', '--endpoint', '99'], env);
    expect([missing.code, missing.stderr.trim()]).toEqual([1, 'Webhook endpoint 99 does not exist.']);
    const usage = await cli(['webhooks:deliveries'], env);
    expect(usage.code).toBe(2);
  });

  it('when webhooks:enable runs, then the disabled endpoint is enabled with no reason and no failure streak', async () => {
    const run = await cli(['webhooks:enable', '--endpoint', '2'], env);
    expect(run.code).toBe(0);
    expect(await knex('webhook_endpoints').select('enabled', 'disabled_reason', 'failing_since').where({ id: 2 }).first()).toEqual({
      enabled: 1,
      disabled_reason: null,
      failing_since: null,
    });
  });

  it('when events:status runs, then it says how many changes wait, the newest event and the pending attempts', async () => {
    const newest = (await knex('events').max({ id: 'id' }).first()) as { id: number };
    const pending = (await knex('event_pending').count({ n: '*' }).first()) as { n: number };
    const run = await cli(['events:status'], env);
    expect(run.code).toBe(0);
    const lines = Object.fromEntries(
      run.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(': ') as [string, string]),
    );
    expect(Number(lines['changes waiting to be published'])).toBe(Number(pending.n));
    expect(Number(lines['webhook attempts pending'])).toBe(1);
    expect(lines['newest event']).toEqual(newest.id == null ? 'none' : expect.stringMatching(new RegExp(`^${newest.id} at `)));
  });
});
