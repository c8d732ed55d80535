import os from 'node:os';
import type { Logger } from 'pino';
import { describeRedisEndpoint, type AppConfig, type RedisEndpoint, type WorkerQueueName } from '@logi/config';
import type { PdfRendererPort } from '@logi/domain';
import { buildWorkerContainer } from './container.js';
import type { Stoppable, WorkerProcessTasks } from './process-tasks.js';
import { WorkerTokens } from './tokens.js';

export interface RunningWorker {
  /** Where Prometheus scrapes this worker; null when METRICS_PORT is 0. */
  metricsUrl: string | null;
  /** Stops taking jobs, lets running ones finish (bounded), then closes the browser and the database. */
  stop(): Promise<void>;
}

/** The queues whose work nobody waits for: a worker that takes only these yields the cores (BULK_WORKER_NICE). */
const BULK_ONLY: readonly WorkerQueueName[] = ['pdf-bulk', 'exports'];

/**
 * The nice value of a worker that takes only bulk work (WORKER_QUEUES=bulk): its process and the Chromium it starts
 * (which inherits it) give the cores to interactive workers on the same host (docs/contribute/decisions/0053-worker-pools.md).
 */
export const BULK_WORKER_NICE = 10;

/** Starts taking jobs from the queues WORKER_QUEUES names; resolves once the workers are connected. */
export async function startWorker(config: AppConfig & { redis: RedisEndpoint }, logger: Logger): Promise<RunningWorker> {
  // Before Chromium is started, so that it inherits the priority. Only ever lowered: a process may not raise its own.
  const bulkOnly = config.workerQueues.every((queue) => BULK_ONLY.includes(queue));
  if (bulkOnly && os.getPriority() < BULK_WORKER_NICE) os.setPriority(BULK_WORKER_NICE);
  const container = buildWorkerContainer(config, logger);
  const tasks = container.get<WorkerProcessTasks>(WorkerTokens.ProcessTasks);
  // Before any job is taken: a worker that could not sign its deliveries must not take them.
  await tasks.checkSecretKeys();
  // Making the bucket now saves the first job a round trip; if S3 is down, the first job tries again.
  await tasks.prepareStorage().catch((error: unknown) => logger.warn({ err: error }, 'storage not ready at start; will retry on first use'));
  // Ready (on /health/ready of the metrics listener) from the moment jobs are taken until a stop begins.
  let ready = false;
  type JobWorker = { waitUntilReady(): Promise<void>; close(): Promise<void>; live(): boolean };
  let worker: JobWorker | null = null;
  const loop = container.get<{ state(): { live: boolean }; stop(): void }>(WorkerTokens.EventLoop);
  // Live (/health/live) while the event loop keeps time and the worker takes the jobs that wait for it
  // (docs/operate/redis-and-sentinel.md#a-worker-that-stops-taking-jobs): otherwise only a restart helps.
  const live = () => loop.state().live && (worker?.live() ?? true);
  // Before any job is taken: a METRICS_PORT already in use (the API's, say) stops the worker at start.
  const metricsListener = await tasks.startMetricsListener({ ready: () => ready, live });
  const jobs = container.get<JobWorker>(WorkerTokens.JobWorker);
  worker = jobs;
  await jobs.waitUntilReady();
  ready = true;
  logger.info(
    {
      concurrency: config.workerConcurrency,
      queues: config.workerQueues,
      nice: os.getPriority(),
      prefix: config.redisPrefix,
      redis: describeRedisEndpoint(config.redis),
    },
    'worker started',
  );
  // The work claimed from the database runs where WORKER_QUEUES names it (docs/contribute/decisions/0053-worker-pools.md).
  const takes = (queue: WorkerQueueName) => config.workerQueues.includes(queue);
  const idle: Stoppable = { stop: async () => undefined };
  const publishing = takes('events') ? tasks.startEventPublishing() : idle;
  const delivering = takes('webhooks') ? tasks.startWebhookDelivering() : idle;
  const exporting = takes('exports') ? tasks.startExportRunning() : idle;

  let stopping: Promise<void> | null = null;
  const stop = async () => {
    ready = false;
    logger.info('worker stopping');
    await closeQuietly(logger, 'export running', () => exporting.stop());
    await jobs.close();
    await closeQuietly(logger, 'event publishing', () => publishing.stop());
    await closeQuietly(logger, 'webhook delivery', () => delivering.stop());
    await closeQuietly(logger, 'job queue', () => container.get<{ close(): Promise<void> }>(WorkerTokens.JobQueue).close());
    // Built with the job handlers at start, so these are the instances the jobs used.
    await closeQuietly(logger, 'renderer', () => container.get<PdfRendererPort>(WorkerTokens.PdfRenderer).close());
    await closeQuietly(logger, 'read replicas', async () => container.get<{ close(): Promise<void> } | null>(WorkerTokens.ReadReplicas)?.close());
    await closeQuietly(logger, 'database', () => container.get<{ destroy(): Promise<void> }>(WorkerTokens.Knex).destroy());
    await closeQuietly(logger, 'metrics listener', async () => metricsListener?.stop());
    loop.stop();
    logger.info('worker stopped');
  };
  return {
    metricsUrl: metricsListener?.url ?? null,
    stop: () => (stopping ??= stop()),
  };
}

async function closeQuietly(logger: Logger, what: string, close: () => Promise<unknown>): Promise<void> {
  try {
    await close();
  } catch (error) {
    logger.warn({ err: error }, `closing the ${what} failed`);
  }
}
