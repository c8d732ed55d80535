/** Work running in the background of a process until stopped. */
export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * The process machinery a worker starts beside its job workers
 * (start-worker.ts), made by the composition root from the adapters, with
 * the logger and settings already given.
 */
export interface WorkerProcessTasks {
  /** Throws a ConfigError when a stored webhook secret is sealed with a key this process lacks or that does not open it (checked at start); seals secrets still in clear. */
  checkSecretKeys(): Promise<void>;
  /** Makes what storage needs before the first job (the S3 bucket); a failure is the first job's to retry. */
  prepareStorage(): Promise<void>;
  /** Prometheus' listener with this worker's health probes on METRICS_HOST:METRICS_PORT; null when METRICS_PORT is 0. */
  startMetricsListener(health: { ready(): boolean; live(): boolean }): Promise<{ url: string; stop(): Promise<void> } | null>;
  /** Publishes captured changes as events, again and again. */
  startEventPublishing(): Stoppable;
  /** Delivers webhooks from this process, on slots of its own beside the job queue's. */
  startWebhookDelivering(): Stoppable;
  /** Makes exports from this process, one at a time. */
  startExportRunning(): Stoppable;
}
