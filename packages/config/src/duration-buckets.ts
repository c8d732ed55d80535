/** Histogram buckets of every duration series, API and worker alike, in seconds; HTTP answers are mostly milliseconds, PDFs and uploads up to tens of seconds. */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
