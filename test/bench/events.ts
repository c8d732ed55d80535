import os from 'node:os';
import { parseSize, type BenchConfig } from './config.js';
import { benchDelivery, type DeliveryResults } from './events-delivery.js';
import { benchEventFeed, type EventsFeedResults } from './events-feed.js';
import { prepareEventFeed, type EventFeedDatabase } from './events-seed.js';
import { benchWriteCost, type WriteCostResults } from './events-write.js';
import { log } from './progress.js';
import { prepareMariadb } from './seed.js';

export interface EventsResults {
  at: string;
  loadAverage: number[];
  feedDatabases: Array<{ label: string; n: number } & EventFeedDatabase['info']>;
  feed: EventsFeedResults;
  write: WriteCostResults;
  delivery: DeliveryResults;
}

/**
 * The events part (issue 18): the feed at each size and against its floor,
 * the write cost of capture and the publisher's catching up after a bulk
 * load, webhook delivery against a bare signed-POST loop and the latencies
 * of one write at a time. Every API child is stopped before the next step.
 */
export async function benchEvents(config: BenchConfig, previous?: EventsResults): Promise<EventsResults> {
  const at = new Date().toISOString();
  const loadAverage = os.loadavg().map((v) => Math.round(v * 100) / 100);
  if (config.eventsOnlyDelivery) {
    if (!previous) throw new Error('BENCH_EVENTS_ONLY=delivery keeps the feed and write figures of the last run: run the whole events part once first');
    return { ...previous, at, loadAverage, delivery: await benchDeliveryPart(config) };
  }
  const feeds: EventFeedDatabase[] = [];
  for (const size of config.eventsFeedSizes) feeds.push(await prepareEventFeed(config, size.n));

  const write = await benchWriteCost(config, config.eventsWriteInvoices);

  log(`events feed: ${feeds.map((feed) => feed.label).join(', ')}`);
  const feed = await benchEventFeed(feeds, {
    rounds: config.eventsFeedRounds,
    warmup: 20,
    requests: config.eventsFeedRequests,
    connections: config.connections,
  });

  const delivery = await benchDeliveryPart(config);

  return {
    at,
    loadAverage,
    feedDatabases: feeds.map((db) => ({ label: db.label, n: db.n, ...db.info })),
    feed,
    write,
    delivery,
  };
}

/** The PDF and upload parts' shape of data: 2,000 invoices (and their created events) in the big directory. */
async function benchDeliveryPart(config: BenchConfig): Promise<DeliveryResults> {
  const io = await prepareMariadb(config, parseSize('2k'), 'logi_bench_events_io');
  return benchDelivery(io, { rounds: config.eventsDeliveryRounds, samples: config.eventsLatencySamples });
}
