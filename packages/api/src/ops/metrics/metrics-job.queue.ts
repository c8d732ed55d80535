import { failureReason, type JobName, type JobPayloads, type JobQueuePort, type JobResults, type RunJobOptions } from '@logi/domain';
import type { ApiMetrics } from './api-metrics.js';

/**
 * Times every job the API waits for and counts failures and stored upload
 * bytes, around whichever queue is configured (in-process or BullMQ), so the
 * queue adapters stay free of metrics.
 */
export class MetricsJobQueue implements JobQueuePort {
  constructor(
    private readonly inner: JobQueuePort,
    private readonly metrics: ApiMetrics,
  ) {}

  async runAndWait<N extends JobName>(name: N, payload: JobPayloads[N], options: RunJobOptions): Promise<JobResults[N]> {
    const stopTimer = this.metrics.jobDuration.startTimer({ job: name });
    let result: JobResults[N];
    try {
      result = await this.inner.runAndWait(name, payload, options);
    } catch (error) {
      stopTimer({ outcome: 'failed' });
      this.metrics.jobFailures.inc({ job: name, reason: failureReason(error) });
      throw error;
    }
    stopTimer({ outcome: 'completed' });
    if (name === 'store-order-file') this.countUpload(payload as JobPayloads['store-order-file'], result as JobResults['store-order-file']);
    return result;
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** A storage failure is a result of the job, not an error: it ends up in the upload's `failed[]`. */
  private countUpload(payload: JobPayloads['store-order-file'], result: JobResults['store-order-file']): void {
    if ('fileId' in result) {
      this.metrics.uploadedFiles.inc({ outcome: 'stored' });
      this.metrics.uploadedBytes.inc(payload.size);
    } else {
      this.metrics.uploadedFiles.inc({ outcome: 'failed' });
    }
  }
}
