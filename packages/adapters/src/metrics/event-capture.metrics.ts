import { Histogram, type Registry } from 'prom-client';

/** From the write to the feed: normally under a second or two, minutes during a bulk load or an outage. */
const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];

/**
 * `logistics_event_capture_lag_seconds`: how long each change published by this process waited between the write that
 * captured it (its trigger's time) and the commit that put its events in the feed. Every process that publishes (API
 * and workers) observes the changes it published; sum them. Feed to KnexEventCapture's `onPublished`.
 */
export function eventCaptureLagMetrics(registry: Registry): (lagsSeconds: number[]) => void {
  const lag = new Histogram({
    name: 'logistics_event_capture_lag_seconds',
    help: 'Time from a write to the publication of its events in the feed, per captured change published by this process.',
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  return (lagsSeconds) => {
    for (const seconds of lagsSeconds) lag.observe(seconds);
  };
}
