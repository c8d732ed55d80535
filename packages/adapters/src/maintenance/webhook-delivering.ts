import type { Logger } from 'pino';
import type { ClaimedDelivery, DeliverWebhookUseCase, DeliveryOutcome, WebhookDeliveryQueuePort } from '@logi/domain';
import type { PeriodicTask } from './periodic-task.js';

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
}

/** What a claim holds beyond the attempt's own timeout (recording its outcome), before another process may take it. */
const LEASE_MARGIN_SECONDS = 5;
/**
 * Attempts are claimed ahead: up to as many again as the slots, each endpoint and directory up to its bound again,
 * so that an attempt starts the moment a slot frees instead of after a claim's round trips (issue 26). One claimed
 * ahead waits at most one attempt's timeout for its endpoint or directory to have a slot (the lease covers that
 * wait too), else it is given back (due again at once).
 */
const AHEAD_FACTOR = 1;
/** Finished attempts are recorded together: at most this long after the first of them ended, one commit for all. */
const RECORD_EVERY_MS = 20;
/** After an attempt ends, the next claim waits this long for others to end too (one claim fills several slots). */
const CLAIM_COALESCE_MS = 5;
/** With free slots, claims come at least this often: a due attempt with a free slot starts within 2 s (contract, "Fair sharing"). */
const MAX_CLAIM_INTERVAL_MS = 1_000;

/**
 * Delivers due webhook attempts from this process, on its own slots (never
 * the job queue's): no endpoint more than `perEndpoint` in flight and no
 * directory more than `perDirectory` (shared fairly: `shareDeliverySlots`).
 * It claims ahead (AHEAD_FACTOR): attempts wait claimed in this process and
 * start, in claim order, as soon as their slots allow, while the next claim
 * runs beside the attempts in flight; claims come soon after attempts end,
 * else every `intervalMs`; outcomes are recorded in batches. An outcome not
 * recorded (the process dies, the database is away) leaves its attempt to
 * come due again when its lease ends: at least once. stop() gives back what
 * was claimed ahead, waits for the attempts in flight and records them.
 */
export function startWebhookDelivering(options: WebhookDeliveringOptions): PeriodicTask {
  const { deliver, queue, concurrency, perEndpoint, perDirectory, logger } = options;
  const intervalMs = Math.min(options.intervalMs, MAX_CLAIM_INTERVAL_MS);
  const aheadMaxMs = options.attemptTimeoutMs;
  const leaseSeconds = Math.ceil((options.attemptTimeoutMs + aheadMaxMs) / 1000) + LEASE_MARGIN_SECONDS;
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const inFlight = new Map<number, number>();
  const inFlightOfDirectory = new Map<string, number>();
  const running = new Set<Promise<void>>();
  /** Claimed and not started yet, in claim order (round-robin over directories, then endpoints). */
  const ahead: Array<{ claimed: ClaimedDelivery; at: number }> = [];
  const aheadOfEndpoint = new Map<number, number>();
  const aheadOfDirectory = new Map<string, number>();
  let expiryTimer: NodeJS.Timeout | null = null;
  let finished: DeliveryOutcome[] = [];
  let recording: Promise<void> = Promise.resolve();
  let recordTimer: NodeJS.Timeout | null = null;
  let stopped = false;
  let claimTimer: NodeJS.Timeout | null = null;
  let claimDueAt = Infinity;
  let claiming = false;
  let failing = false;

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

  const add = <K>(map: Map<K, number>, key: K, by: number) => {
    const value = (map.get(key) ?? 0) + by;
    if (value > 0) map.set(key, value);
    else map.delete(key);
  };

  const giveBack = (items: ClaimedDelivery[]) => {
    if (items.length === 0) return Promise.resolve();
    return queue
      .release(
        items.map((item) => item.delivery.id),
        nowSeconds(),
      )
      .catch((error: unknown) =>
        logger.warn({ err: error, attempts: items.length }, 'webhook attempts claimed ahead could not be given back; each is due again when its lease ends'),
      );
  };

  /**
   * Starts what was claimed ahead while slots are free: each time the attempt whose directory, then endpoint, has
   * the fewest in flight (the oldest claim on a tie), so the directories and endpoints share the slots as the claim
   * shared them. Gives back what waited longer than aheadMaxMs, and everything once stopped.
   */
  const pump = () => {
    const now = Date.now();
    const fits = (claimed: ClaimedDelivery) =>
      (inFlight.get(claimed.delivery.endpointId) ?? 0) < perEndpoint && (inFlightOfDirectory.get(claimed.directory) ?? 0) < perDirectory;
    const take = (index: number) => {
      const { claimed } = ahead.splice(index, 1)[0]!;
      add(aheadOfEndpoint, claimed.delivery.endpointId, -1);
      add(aheadOfDirectory, claimed.directory, -1);
      return claimed;
    };
    while (!stopped && running.size < concurrency) {
      let best = -1;
      for (let index = 0; index < ahead.length; index++) {
        const { claimed } = ahead[index]!;
        if (!fits(claimed)) continue;
        if (best < 0) {
          best = index;
          continue;
        }
        const other = ahead[best]!.claimed;
        const byDirectory = (inFlightOfDirectory.get(claimed.directory) ?? 0) - (inFlightOfDirectory.get(other.directory) ?? 0);
        const byEndpoint = (inFlight.get(claimed.delivery.endpointId) ?? 0) - (inFlight.get(other.delivery.endpointId) ?? 0);
        if (byDirectory < 0 || (byDirectory === 0 && byEndpoint < 0)) best = index;
      }
      if (best < 0) break;
      start(take(best));
    }
    const stale: ClaimedDelivery[] = [];
    for (let index = ahead.length - 1; index >= 0; index--) if (stopped || now - ahead[index]!.at >= aheadMaxMs) stale.unshift(take(index));
    if (expiryTimer) clearTimeout(expiryTimer);
    expiryTimer = null;
    if (ahead.length > 0 && !stopped) {
      expiryTimer = setTimeout(() => void pump(), Math.max(0, ahead[0]!.at + aheadMaxMs - Date.now()));
      expiryTimer.unref();
    }
    return giveBack(stale);
  };

  const start = (claimed: ClaimedDelivery) => {
    const endpointId = claimed.delivery.endpointId;
    const directory = claimed.directory;
    inFlight.set(endpointId, (inFlight.get(endpointId) ?? 0) + 1);
    inFlightOfDirectory.set(directory, (inFlightOfDirectory.get(directory) ?? 0) + 1);
    const attempt = deliver
      .execute(claimed)
      .then((outcome) => {
        finished.push(outcome);
        if (finished.length >= concurrency) void flush();
        else recordTimer ??= setTimeout(() => void flush(), RECORD_EVERY_MS);
      })
      .catch((error: unknown) =>
        logger.warn({ err: error, deliveryId: claimed.delivery.id }, 'a webhook attempt failed unexpectedly; it is tried again when its lease ends'),
      )
      .finally(() => {
        const left = (inFlight.get(endpointId) ?? 1) - 1;
        if (left > 0) inFlight.set(endpointId, left);
        else inFlight.delete(endpointId);
        const leftOfDirectory = (inFlightOfDirectory.get(directory) ?? 1) - 1;
        if (leftOfDirectory > 0) inFlightOfDirectory.set(directory, leftOfDirectory);
        else inFlightOfDirectory.delete(directory);
        running.delete(attempt);
        void pump();
        claimIn(CLAIM_COALESCE_MS);
      });
    running.add(attempt);
  };

  const claim = async () => {
    if (stopped || claiming) return;
    claiming = true;
    let next = intervalMs;
    try {
      const free = concurrency * (1 + AHEAD_FACTOR) - running.size - ahead.length;
      if (free > 0) {
        const claimed = await queue.claimDue(
          nowSeconds(),
          {
            limit: free,
            endpointSlots: (endpointId) => perEndpoint * (1 + AHEAD_FACTOR) - (inFlight.get(endpointId) ?? 0) - (aheadOfEndpoint.get(endpointId) ?? 0),
            directorySlots: (directory) =>
              perDirectory * (1 + AHEAD_FACTOR) - (inFlightOfDirectory.get(directory) ?? 0) - (aheadOfDirectory.get(directory) ?? 0),
          },
          leaseSeconds,
        );
        if (failing) logger.info('webhook delivery works again');
        failing = false;
        const at = Date.now();
        for (const item of claimed) {
          ahead.push({ claimed: item, at });
          add(aheadOfEndpoint, item.delivery.endpointId, 1);
          add(aheadOfDirectory, item.directory, 1);
        }
        void pump();
        // All free slots filled: there may be more due at once.
        if (claimed.length === free) next = 0;
      }
    } catch (error) {
      if (!failing) logger.warn({ err: error }, 'claiming webhook attempts failed; will try again');
      failing = true;
      next = Math.max(intervalMs, 1_000);
    } finally {
      claiming = false;
    }
    if (running.size + ahead.length < concurrency * (1 + AHEAD_FACTOR)) claimIn(next);
  };

  claimIn(0);
  return {
    async stop() {
      stopped = true;
      if (claimTimer) clearTimeout(claimTimer);
      // What was claimed ahead is given back at once, for another process to send.
      await pump();
      await Promise.all([...running]);
      if (recordTimer) clearTimeout(recordTimer);
      await flush();
    },
  };
}
