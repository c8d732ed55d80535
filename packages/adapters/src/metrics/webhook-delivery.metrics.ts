import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ClaimedDelivery, DeliveryOutcome } from '@logi/domain';

/** Why an attempt failed, as a bounded label: the coarse reason the client is shown, or the answer's status class. */
export const WEBHOOK_FAILURE_REASONS = [
  'timeout',
  'connection',
  'dns',
  'tls',
  'refused_target',
  'invalid_answer',
  'http_3xx',
  'http_4xx',
  'http_5xx',
  'http_other',
  'not_sent',
  'event_expired',
  'other',
] as const;
export type WebhookFailureLabel = (typeof WEBHOOK_FAILURE_REASONS)[number];

/** Commit to answer: from well under a second (a live endpoint) to the hours of the retry schedule. */
const LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

/** The label of a failed attempt (the client's coarse reason, or the status of the answer). */
export function webhookFailureLabel(outcome: Pick<DeliveryOutcome, 'responseStatus' | 'error'>, eventKept: boolean): WebhookFailureLabel {
  if (outcome.responseStatus !== null) {
    const status = outcome.responseStatus;
    if (status >= 300 && status < 400) return 'http_3xx';
    if (status >= 400 && status < 500) return 'http_4xx';
    if (status >= 500 && status < 600) return 'http_5xx';
    return 'http_other';
  }
  if (!eventKept) return 'event_expired';
  const error = outcome.error ?? '';
  if (error.startsWith('refused:')) return 'refused_target';
  const byReason: Record<string, WebhookFailureLabel> = {
    'timed out': 'timeout',
    'connection failed': 'connection',
    'host not found': 'dns',
    'TLS error': 'tls',
    'invalid answer': 'invalid_answer',
    'not sent': 'not_sent',
  };
  return byReason[error] ?? 'other';
}

/** Told of each webhook attempt this process made (startWebhookDelivering's `observer`). */
export interface WebhookDeliveryObserver {
  attempted(claimed: ClaimedDelivery, outcome: DeliveryOutcome): void;
}

/**
 * The deliveries' metrics, on the registry of each process that delivers (a worker, or the API in the embedded profile):
 * - `logistics_webhook_attempts_total{outcome}`: attempts, `delivered` (a 2xx answer) or `failed`;
 * - `logistics_webhook_attempt_failures_total{reason}`: failed attempts by WEBHOOK_FAILURE_REASONS;
 * - `logistics_webhook_delivery_lag_seconds`: from the event's publication (its commit; whole seconds) to the 2xx answer
 *   that delivered it, retries included.
 */
export function webhookDeliveryMetrics(registry: Registry, nowMs: () => number = Date.now): WebhookDeliveryObserver {
  const attempts = new Counter({
    name: 'logistics_webhook_attempts_total',
    help: 'Webhook attempts made by this process, by outcome (delivered = a 2xx answer, failed).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const failures = new Counter({
    name: 'logistics_webhook_attempt_failures_total',
    help: 'Failed webhook attempts by reason (timeout, connection, dns, tls, refused_target, invalid_answer, http_3xx/4xx/5xx/other, not_sent, event_expired, other).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'logistics_webhook_delivery_lag_seconds',
    help: "Time from an event's publication (whole seconds) to the 2xx answer that delivered it, retries included.",
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  for (const outcome of ['delivered', 'failed']) attempts.inc({ outcome }, 0);
  for (const reason of WEBHOOK_FAILURE_REASONS) failures.inc({ reason }, 0);
  return {
    attempted(claimed, outcome) {
      if (outcome.succeeded) {
        attempts.inc({ outcome: 'delivered' });
        if (claimed.event) lag.observe(Math.max(0, nowMs() / 1000 - claimed.event.created));
        return;
      }
      attempts.inc({ outcome: 'failed' });
      failures.inc({ reason: webhookFailureLabel(outcome, claimed.event !== null) });
    },
  };
}

/** Counts the enabled endpoints whose latest attempts all failed (KnexWebhookEndpointRepository.countFailing). */
export interface FailingEndpointsSource {
  countFailing(): Promise<number>;
}

/**
 * `logistics_webhook_endpoints_failing`: enabled endpoints whose every attempt since their latest success failed, read
 * from the database at scrape time (every process that registers it reports the same number: alert on `max`). When the
 * database does not answer within `timeoutMs` the series is left out of that scrape.
 */
export function registerFailingEndpointsGauge(
  registry: Registry,
  source: FailingEndpointsSource,
  options: { timeoutMs?: number; onError?: (error: unknown) => void } = {},
): void {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const gauge: Gauge = new Gauge({
    name: 'logistics_webhook_endpoints_failing',
    help: 'Enabled webhook endpoints whose attempts have all failed since their latest success, read from the database at scrape time.',
    registers: [registry],
    async collect() {
      gauge.reset();
      let timer: NodeJS.Timeout | undefined;
      try {
        const count = await Promise.race([
          source.countFailing(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        gauge.set(count);
      } catch (error) {
        options.onError?.(error);
      } finally {
        clearTimeout(timer);
      }
    },
  });
}
