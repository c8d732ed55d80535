import type { Logger } from 'pino';
import type { ClaimedDelivery, DeliverWebhookUseCase, WebhookDeliveryQueuePort } from '@logi/domain';
import type { PeriodicTask } from './periodic-task.js';

export interface WebhookDeliveringOptions {
  deliver: DeliverWebhookUseCase;
  queue: WebhookDeliveryQueuePort;
  /** Attempts in flight in this process, all endpoints together. */
  concurrency: number;
  /** Attempts in flight to one endpoint from this process: a slow endpoint holds at most these slots. */
  perEndpoint: number;
  /** How long a claim is held before another process may take the attempt (longer than an attempt can take). */
  leaseSeconds: number;
  intervalMs: number;
  logger: Logger;
  nowSeconds?: () => number;
}

/**
 * Delivers due webhook attempts from this process, on its own slots (never
 * the job queue's): it claims as many as it has free slots, no endpoint more
 * than `perEndpoint`, sends them concurrently, and claims again as soon as
 * one ends, else every `intervalMs`. stop() waits for the attempts in flight.
 */
export function startWebhookDelivering(options: WebhookDeliveringOptions): PeriodicTask {
  const { deliver, queue, concurrency, perEndpoint, leaseSeconds, intervalMs, logger } = options;
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const inFlight = new Map<number, number>();
  const running = new Set<Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let claiming = false;
  let failing = false;

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void claim(), ms);
    timer.unref();
  };

  const start = (claimed: ClaimedDelivery) => {
    const endpointId = claimed.delivery.endpointId;
    inFlight.set(endpointId, (inFlight.get(endpointId) ?? 0) + 1);
    const attempt = deliver
      .execute(claimed)
      .then((outcome) => {
        if (outcome.disableReason) logger.warn({ endpointId, reason: outcome.disableReason }, 'webhook endpoint disabled');
      })
      .catch((error: unknown) => logger.warn({ err: error, deliveryId: claimed.delivery.id }, 'a webhook attempt could not be recorded; it is tried again when its lease ends'))
      .finally(() => {
        const left = (inFlight.get(endpointId) ?? 1) - 1;
        if (left > 0) inFlight.set(endpointId, left);
        else inFlight.delete(endpointId);
        running.delete(attempt);
        schedule(0);
      });
    running.add(attempt);
  };

  const claim = async () => {
    if (stopped || claiming) return;
    claiming = true;
    let next = intervalMs;
    try {
      const free = concurrency - running.size;
      if (free > 0) {
        const claimed = await queue.claimDue(nowSeconds(), free, (endpointId) => perEndpoint - (inFlight.get(endpointId) ?? 0), leaseSeconds);
        if (failing) logger.info('webhook delivery works again');
        failing = false;
        for (const item of claimed) start(item);
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
    if (running.size < concurrency) schedule(next);
  };

  schedule(0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.all([...running]);
    },
  };
}
