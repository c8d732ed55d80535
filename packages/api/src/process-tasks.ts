/** Work running in the background of a process until stopped. */
export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * The process machinery the API starts once it listens (server.ts, the
 * housekeeping), made by the composition root from the adapters, with the
 * logger, database and settings already given: the metrics listener, the
 * event publishing and webhook delivering loops, periodic tasks.
 */
export interface ApiProcessTasks {
  /**
   * Throws a ConfigError when a stored webhook secret is encrypted with a key this process lacks, or a configured key
   * does not open what is sealed under its id (checked before the API listens); seals secrets still in clear.
   */
  checkSecretKeys(): Promise<void>;
  /** Prometheus' listener on METRICS_HOST:METRICS_PORT; null when METRICS_PORT is 0. */
  startMetricsListener(): Promise<{ url: string; stop(): Promise<void> } | null>;
  /** Publishes captured changes as events, again and again; `onPublished` after a run that stored some. */
  startEventPublishing(onPublished: () => void): Stoppable;
  /** Delivers webhooks from this process (embedded profile); null where workers deliver them (Redis). */
  startWebhookDelivering(): Stoppable | null;
  /** Makes exports from this process (embedded profile); null where workers make them (Redis). */
  startExportRunning(): Stoppable | null;
  /** Runs `task` now and then every `intervalMs`, one run at a time; a failed run is logged. */
  startPeriodic(name: string, task: () => Promise<unknown>, intervalMs: number): Stoppable;
  /** Removes the files of `dir` last changed before `olderThan`; how many it removed. */
  sweepTempFiles(dir: string, olderThan: Date): Promise<number>;
  /** Indexes for search up to `limit` rows written straight into the database (listed by triggers); how many. */
  indexPendingDocuments(limit: number): Promise<number>;
}
