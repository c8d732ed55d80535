import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex, KnexEventCapture, migrateLatest } from '@logi/adapters';
import { PublishEventsUseCase } from '@logi/domain';
import { WORK_DIR, type BenchConfig } from './config.js';
import { dropDatabase, recreateDatabase } from './events-seed.js';
import { log, Progress } from './progress.js';
import { createSeedTables, withSeedSession } from './seed.js';
import { BIG_DIRECTORY, chunkStatements, MYSQL_SEED } from './seed-data.js';

/** Invoices per INSERT … SELECT chunk: the two databases take turns chunk by chunk. */
const CHUNK = 10_000;

export interface WriteCostResults {
  invoices: number;
  chunk: number;
  /** Seconds of the load's statements, summed over the chunks. */
  offSeconds: number;
  onSeconds: number;
  ratio: number;
  /** Triggers dropped in the "off" database. */
  droppedTriggers: string[];
  /** Captured changes waiting after the load (one per invoice). */
  pending: number;
  /** From the publisher's start, right after the load, until event_pending was empty. */
  publishSeconds: number;
  /** Events of the directory in the feed after publishing. */
  feedEvents: number;
  publishBatch: number;
}

async function freshDatabase(config: BenchConfig, name: string, now: number): Promise<Knex> {
  const dataDir = path.join(WORK_DIR, `api-${name}`);
  await recreateDatabase(config, name, dataDir);
  const knex = createKnex({ databaseUrl: `${config.mariadbUrl}/${name}`, dataDir });
  await migrateLatest(knex);
  await createSeedTables(knex, now);
  return knex;
}

async function count(knex: Knex, table: string): Promise<number> {
  return Number(((await knex(table).count({ n: '*' }).first()) as { n: unknown }).n);
}

/**
 * The seed's load of `invoices` invoices (invoices, order rows, items,
 * orders; INSERT … SELECT in chunks) into two fresh databases, one with the
 * event capture triggers and one without (`*_events_*` dropped), the chunks
 * alternating between them (and which goes first), so that drift hits both;
 * then the capturing one's changes published as the API's publisher does,
 * timed until none is left.
 */
export async function benchWriteCost(config: BenchConfig, invoices: number): Promise<WriteCostResults> {
  const now = Math.floor(Date.now() / 1000);
  const names = { on: 'logi_bench_events_write_on', off: 'logi_bench_events_write_off' };
  const on = await freshDatabase(config, names.on, now);
  const off = await freshDatabase(config, names.off, now);
  try {
    const [triggers] = (await off.raw('SHOW TRIGGERS')) as unknown as [Array<{ Trigger: string }>];
    const droppedTriggers = triggers.map((row) => row.Trigger).filter((name) => name.includes('_events_'));
    for (const name of droppedTriggers) await off.raw(`DROP TRIGGER \`${name}\``);

    log(
      `events write cost: loading ${invoices.toLocaleString('en-US')} invoices into ${names.off} and ${names.on}, ${CHUNK.toLocaleString('en-US')} at a time, alternating`,
    );
    const progress = new Progress('events write cost: loading', 2 * invoices, 'invoices');
    const seconds = { on: 0, off: 0 };
    let done = 0;
    await withSeedSession(off, MYSQL_SEED, (runOff) =>
      withSeedSession(on, MYSQL_SEED, async (runOn) => {
        for (let from = 1, k = 0; from <= invoices; from += CHUNK, k++) {
          const to = Math.min(invoices, from + CHUNK - 1);
          const statements = chunkStatements(MYSQL_SEED, { directory: BIG_DIRECTORY, offset: 0, from, to, now, salt: 0 });
          const order = k % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
          for (const which of order) {
            const started = process.hrtime.bigint();
            await (which === 'on' ? runOn : runOff)(statements);
            seconds[which] += Number(process.hrtime.bigint() - started) / 1e9;
            done += to - from + 1;
            progress.update(done);
          }
        }
      }),
    );
    progress.finish();
    const [onInvoices, offInvoices] = [await count(on, 'invoices'), await count(off, 'invoices')];
    if (onInvoices !== invoices || offInvoices !== invoices)
      throw new Error(`the write-cost loads made ${onInvoices} and ${offInvoices} invoices, not ${invoices}`);
    const pending = await count(on, 'event_pending');
    if ((await count(off, 'event_pending')) !== 0) throw new Error(`${names.off} captured changes: its triggers were not all dropped`);
    log(
      `events write cost: ${seconds.off.toFixed(1)} s without capture, ${seconds.on.toFixed(1)} s with (${(seconds.on / seconds.off).toFixed(2)}x); ${pending} changes captured`,
    );

    const capture = new KnexEventCapture(on);
    const publish = new PublishEventsUseCase({ capture }); // as the API and the worker publish (its default batch and budget);
    const loadedAt = Date.now();
    const publishing = new Progress('events write cost: publishing', pending, 'changes');
    let published = 0;
    for (;;) {
      const run = await publish.execute();
      published += run.changes;
      publishing.update(published);
      if (!run.budgetSpent) break;
    }
    const publishSeconds = (Date.now() - loadedAt) / 1000;
    publishing.finish();
    if (await capture.hasPending()) throw new Error('changes are still pending after publishing');
    const feedEvents = Number(((await on('events').where({ directory: BIG_DIRECTORY }).count({ n: '*' }).first()) as { n: unknown }).n);
    log(`events write cost: ${feedEvents.toLocaleString('en-US')} events in the feed ${publishSeconds.toFixed(1)} s after the load`);
    return {
      invoices,
      chunk: CHUNK,
      offSeconds: seconds.off,
      onSeconds: seconds.on,
      ratio: seconds.on / seconds.off,
      droppedTriggers,
      pending,
      publishSeconds,
      feedEvents,
      publishBatch: 500, // PublishEventsUseCase's default
    };
  } finally {
    await on.destroy();
    await off.destroy();
    await dropDatabase(config, names.on);
    await dropDatabase(config, names.off);
  }
}
