import type { ChangeEvent, CursorMarks, EventFeedPort } from '@logi/domain';
import { KnexEventFeed } from '../events/knex-event.feed.js';
import type { ReadReplicas, ReadTarget } from './read-replicas.js';

/**
 * The event feed (`GET /v1/events`) read where ReadReplicas sends reads now,
 * one KnexEventFeed (and long-poll watcher) per database. Retention's
 * removal writes, so it runs on the primary. A long poll waits on the
 * database it started on and ends early when reads move elsewhere (the
 * caller reads the page again, there). A replica applies the primary's
 * commits in order, so a feed read there never shows an event without the
 * ones before it; it may show them later (up to DB_REPLICA_MAX_LAG_SECONDS).
 */
export class ReplicaEventFeed implements EventFeedPort {
  private readonly on: (target: ReadTarget) => KnexEventFeed;

  constructor(
    private readonly replicas: ReadReplicas,
    options: ConstructorParameters<typeof KnexEventFeed>[1] = {},
  ) {
    this.on = replicas.each((knex) => new KnexEventFeed(knex, options));
  }

  page(directory: string, after: number, limit: number, types: readonly string[]): Promise<ChangeEvent[]> {
    return this.replicas.read((target) => this.on(target).page(directory, after, limit, types));
  }

  latestId(directory: string): Promise<number> {
    return this.replicas.read((target) => this.on(target).latestId(directory));
  }

  cursorMarks(directory: string): Promise<CursorMarks> {
    return this.replicas.read((target) => this.on(target).cursorMarks(directory));
  }

  waitForEvents(directory: string, after: number, ms: number, signal?: AbortSignal): Promise<void> {
    return this.replicas.read(async (target) => {
      const moved = new AbortController();
      const stopListening = this.replicas.onSwitch(() => moved.abort());
      try {
        await this.on(target).waitForEvents(directory, after, ms, signal ? AbortSignal.any([signal, moved.signal]) : moved.signal);
      } finally {
        stopListening();
      }
    });
  }

  removeExpired(createdBefore: number, limit: number): Promise<number> {
    return this.on(this.replicas.primary).removeExpired(createdBefore, limit);
  }

  /** This process published events: every database's watcher looks now (a replica's may not have them yet, and looks again). */
  notify(): void {
    for (const target of this.replicas.targets) this.on(target).notify();
  }

  /** Ends every wait (shutdown). */
  close(): void {
    for (const target of this.replicas.targets) this.on(target).close();
  }
}
