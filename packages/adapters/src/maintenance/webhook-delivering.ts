import type { Logger } from 'pino';
import type { ClaimedDelivery, DeliverWebhookUseCase, DeliveryOutcome, WebhookDeliveryQueuePort } from '@logi/domain';
import type { PeriodicTask } from './periodic-task.js';
import type { WebhookDeliveryObserver } from '../metrics/webhook-delivery.metrics.js';

export interface WebhookDeliveringOptions {
  deliver: DeliverWebhookUseCase;
  queue: WebhookDeliveryQueuePort;
  /** Attempts in flight in this process, all endpoints together. */
  concurrency: number;
  /** Attempts in flight to one endpoint from this process: a slow endpoint holds at most these slots. */
  perEndpoint: number;
  /** Attempts in flight to one client directory's endpoints from this process: one directory never holds every slot. */
  perDirectory: number;
  /** WEBHOOK_TIMEOUT_MS: an attempt's claim outlives it by LEASE_MARGIN_SECONDS before another process may take it. */
  attemptTimeoutMs: number;
  intervalMs: number;
  logger: Logger;
  nowSeconds?: () => number;
  /** Told of every attempt's outcome (the metrics). */
  observer?: WebhookDeliveryObserver;
}

/** What a claim holds beyond its attempt's time (recording its outcome), before another process may take it. */
const LEASE_MARGIN_SECONDS = 5;
/** Finished attempts are recorded together: at most this long after the first of them ended, one commit for all. */
const RECORD_EVERY_MS = 20;
/**
 * Claims reach this many times the slots (and each endpoint's and directory's bound), so that an attempt ending
 * starts a claimed one at once while the next claim runs: with claims and sends taking turns, three quarters of
 * the slots stood empty (issue 26, docs/benchmarks.md "Webhook delivery stages").
 */
const CLAIM_AHEAD = 2;
/** A free slot that claimed attempts may not take: the next claim waits this long for other attempts to end too. */
const CLAIM_COALESCE_MS = 5;
/** With free slots, claims come at least this often: a due attempt with a free slot starts within 2 s (contract, "Fair sharing"). */
const MAX_CLAIM_INTERVAL_MS = 1_000;

/**
 * Delivers due webhook attempts from this process, on its own slots (never
 * the job queue's). Claims fill up to CLAIM_AHEAD times `concurrency`,
 * `perEndpoint` and `perDirectory` attempts in flight and claimed together
 * (shared fairly: `shareDeliverySlots`); a claimed attempt starts as soon as a
 * slot is free within `concurrency`, `perEndpoint` and `perDirectory`, each
 * endpoint taking turns. The next claim runs
 * as soon as one batch of room is free, else every `intervalMs`; where the
 * queue allows two claims in flight (MariaDB), a second one starts when a
 * batch of room frees while the first runs, each bounded by what the other
 * may still take (ADR 0038, "Set-based claims"); outcomes are
 * recorded in batches. An outcome not recorded (the process dies, the
 * database is away) leaves its attempt to come due again when its lease ends:
 * at least once. A lease covers a wait for a slot and the attempt itself.
 * stop() lets the claim under way end, gives back what was claimed and not
 * sent, waits for the attempts in flight and records them.
 */
export function startWebhookDelivering(options: WebhookDeliveringOptions): PeriodicTask {
  const { deliver, queue, concurrency, perEndpoint, perDirectory, logger } = options;
  const intervalMs = Math.min(options.intervalMs, MAX_CLAIM_INTERVAL_MS);
  const attemptSeconds = Math.ceil(options.attemptTimeoutMs / 1000);
  const leaseSeconds = CLAIM_AHEAD * attemptSeconds + LEASE_MARGIN_SECONDS;
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const inFlight = new Map<number, number>();
  const inFlightOfDirectory = new Map<string, number>();
  const running = new Set<Promise<void>>();
  /** Claimed, waiting for a slot, oldest first. */
  const ready: ClaimedDelivery[] = [];
  let finished: DeliveryOutcome[] = [];
  let recording: Promise<void> = Promise.resolve();
  let recordTimer: NodeJS.Timeout | null = null;
  let stopped = false;
  let claimTimer: NodeJS.Timeout | null = null;
  let claimDueAt = Infinity;
  /** Claims in flight: two on MariaDB (SKIP LOCKED keeps them apart), one on SQLite (the port says). */
  const maxClaims = Math.max(1, queue.claimsInFlight ?? 1);
  const claiming = new Set<Promise<void>>();
  /**
   * What each claim in flight may still take: its limit, and the most it was told each endpoint and directory may take.
   * A claim's bounds leave out the others' reservations, so claims side by side never exceed a bound together; a claim's
   * reservation ends when its attempts join `ready` (in the same turn).
   */
  interface Reservation {
    limit: number;
    endpoints: Map<number, number>;
    directories: Map<string, number>;
  }
  const reservations = new Set<Reservation>();
  /**
   * What one claim may take of the room ahead (in slots, or each endpoint's or directory's bound): all of it with one
   * claim in flight, one batch each with two, so that the second claim starts at once beside the first.
   */
  const perClaim = Math.max(1, Math.ceil(CLAIM_AHEAD / maxClaims));
  const reservedBy = (others: (reservation: Reservation) => number, except?: Reservation) => {
    let sum = 0;
    for (const reservation of reservations) if (reservation !== except) sum += others(reservation);
    return sum;
  };
  /** Records what a claim was told it may take of a key (the most it was told), and returns it. */
  const reserve = <K>(taken: Map<K, number>, key: K, free: number) => {
    const may = Math.max(0, free);
    taken.set(key, Math.max(taken.get(key) ?? 0, may));
    return may;
  };
  let failing = false;

  const count = (map: Map<string | number, number>, key: string | number, by: number) => {
    const left = (map.get(key) ?? 0) + by;
    if (left > 0) map.set(key, left);
    else map.delete(key);
  };
  const waiting = (matches: (claimed: ClaimedDelivery) => boolean) => ready.filter(matches).length;

  /** Claims no later than `ms` from now (an earlier call keeps its earlier time). */
  const claimIn = (ms: number) => {
    if (stopped) return;
    const at = Date.now() + ms;
    if (claimTimer && claimDueAt <= at) return;
    if (claimTimer) clearTimeout(claimTimer);
    claimDueAt = at;
    claimTimer = setTimeout(() => {
      claimTimer = null;
      claimDueAt = Infinity;
      void claim();
    }, ms);
    claimTimer.unref();
  };

  /**
   * A batch of room (a whole `concurrency` of slots neither in flight nor claimed): claim now. A free slot that no
   * claimed attempt may take (their endpoints or directories are at their bounds): claim soon, for the others.
   */
  const claimIfRoom = () => {
    if (running.size + ready.length + reservedBy((r) => r.limit) <= (CLAIM_AHEAD - 1) * concurrency) claimIn(0);
    else if (running.size < concurrency) claimIn(CLAIM_COALESCE_MS);
  };

  const flush = () => {
    recordTimer = null;
    const batch = finished;
    finished = [];
    if (batch.length === 0) return recording;
    recording = recording
      .then(() => queue.record(batch))
      .then(() => {
        for (const outcome of batch) {
          // The detail (address, port, system code) is the operator's: the client's attempt list shows only the coarse reason.
          if (!outcome.succeeded)
            logger.info(
              { endpointId: outcome.endpointId, deliveryId: outcome.deliveryId, error: outcome.error, detail: outcome.errorDetail },
              'webhook attempt failed',
            );
          if (outcome.disableReason) logger.warn({ endpointId: outcome.endpointId, reason: outcome.disableReason }, 'webhook endpoint disabled');
        }
      })
      .catch((error: unknown) =>
        logger.warn({ err: error, attempts: batch.length }, 'webhook attempts could not be recorded; each is tried again when its lease ends'),
      );
    return recording;
  };

  const mayStart = (claimed: ClaimedDelivery) =>
    running.size < concurrency &&
    (inFlight.get(claimed.delivery.endpointId) ?? 0) < perEndpoint &&
    (inFlightOfDirectory.get(claimed.directory) ?? 0) < perDirectory;

  /** Starts claimed attempts, oldest first, while their slots and bounds allow; none once stopping (stop() gives them back). */
  const pump = () => {
    if (stopped) return;
    for (let i = 0; i < ready.length && running.size < concurrency;) {
      if (mayStart(ready[i]!)) start(ready.splice(i, 1)[0]!);
      else i += 1;
    }
  };

  const start = (claimed: ClaimedDelivery) => {
    const endpointId = claimed.delivery.endpointId;
    const directory = claimed.directory;
    count(inFlight, endpointId, 1);
    count(inFlightOfDirectory, directory, 1);
    const attempt = deliver
      .execute(claimed)
      .then((outcome) => {
        options.observer?.attempted(claimed, outcome);
        finished.push(outcome);
        if (finished.length >= concurrency) void flush();
        else recordTimer ??= setTimeout(() => void flush(), RECORD_EVERY_MS);
      })
      .catch((error: unknown) =>
        logger.warn({ err: error, deliveryId: claimed.delivery.id }, 'a webhook attempt failed unexpectedly; it is tried again when its lease ends'),
      )
      .finally(() => {
        count(inFlight, endpointId, -1);
        count(inFlightOfDirectory, directory, -1);
        running.delete(attempt);
        pump();
        claimIfRoom();
      });
    running.add(attempt);
  };

  const claim = (): Promise<void> => {
    if (stopped || claiming.size >= maxClaims) return Promise.resolve();
    const mine: Reservation = { limit: 0, endpoints: new Map(), directories: new Map() };
    const run = async () => {
      let next = intervalMs;
      try {
        const room = Math.min(perClaim * concurrency, CLAIM_AHEAD * concurrency - running.size - ready.length - reservedBy((r) => r.limit));
        // Beside a claim in flight, another only for a batch of room: what frees while the first runs.
        if (room >= (claiming.size > 0 ? concurrency : 1)) {
          mine.limit = room;
          reservations.add(mine);
          const claimed = await queue.claimDue(
            nowSeconds(),
            {
              limit: room,
              endpointSlots: (endpointId) =>
                reserve(
                  mine.endpoints,
                  endpointId,
                  Math.min(
                    perClaim * perEndpoint,
                    CLAIM_AHEAD * perEndpoint -
                      (inFlight.get(endpointId) ?? 0) -
                      waiting((c) => c.delivery.endpointId === endpointId) -
                      reservedBy((r) => r.endpoints.get(endpointId) ?? 0, mine),
                  ),
                ),
              directorySlots: (directory) =>
                reserve(
                  mine.directories,
                  directory,
                  Math.min(
                    perClaim * perDirectory,
                    CLAIM_AHEAD * perDirectory -
                      (inFlightOfDirectory.get(directory) ?? 0) -
                      waiting((c) => c.directory === directory) -
                      reservedBy((r) => r.directories.get(directory) ?? 0, mine),
                  ),
                ),
            },
            leaseSeconds,
          );
          if (failing) logger.info('webhook delivery works again');
          failing = false;
          reservations.delete(mine);
          ready.push(...takingTurns(claimed));
          pump();
          // All the room filled: there may be more due at once.
          if (claimed.length === room) next = 0;
        }
      } catch (error) {
        if (!failing) logger.warn({ err: error }, 'claiming webhook attempts failed; will try again');
        failing = true;
        next = Math.max(intervalMs, 1_000);
      } finally {
        reservations.delete(mine);
      }
      return next;
    };
    const flight: Promise<void> = run().then((next) => {
      claiming.delete(flight);
      if (next === 0) claimIfRoom();
      else if (running.size < concurrency) claimIn(next);
    });
    claiming.add(flight);
    // Room for a second claim beside this one (MariaDB): it starts at once.
    if (claiming.size < maxClaims) claimIfRoom();
    return flight;
  };

  claimIn(0);
  return {
    async stop() {
      stopped = true;
      if (claimTimer) clearTimeout(claimTimer);
      while (claiming.size > 0) await Promise.all([...claiming]);
      // What was claimed and not sent goes back at once, for another process, rather than at the end of its lease.
      const unsent = ready.splice(0).map((claimed) => claimed.delivery.id);
      const released = queue
        .release(unsent, nowSeconds())
        .catch((error: unknown) =>
          logger.warn({ err: error, attempts: unsent.length }, 'claimed webhook attempts could not be given back; each is tried again when its lease ends'),
        );
      await Promise.all([...running]);
      if (recordTimer) clearTimeout(recordTimer);
      await Promise.all([flush(), released]);
    },
  };
}

/** A claim's attempts with their endpoints taking turns (each endpoint's oldest first), so that the slots free now are shared as the claim shared them. */
function takingTurns(claimed: ClaimedDelivery[]): ClaimedDelivery[] {
  const byEndpoint = new Map<number, ClaimedDelivery[]>();
  for (const item of claimed) {
    const queue = byEndpoint.get(item.delivery.endpointId);
    if (queue) queue.push(item);
    else byEndpoint.set(item.delivery.endpointId, [item]);
  }
  const turns: ClaimedDelivery[] = [];
  for (let round = 0; turns.length < claimed.length; round++) {
    for (const queue of byEndpoint.values()) if (round < queue.length) turns.push(queue[round]!);
  }
  return turns;
}
