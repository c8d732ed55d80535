import type { FileStoragePort } from '../../ports/file-storage.port.js';

/** Where the service keeps objects that live only for one request. */
const SHORT_LIVED_PREFIXES = ['staging/', 'pdf/'] as const;

export interface SweepResult {
  deleted: Record<(typeof SHORT_LIVED_PREFIXES)[number], number>;
}

/**
 * Removes staged uploads and rendered PDFs that outlived their request: a
 * process killed between staging and promoting, or between rendering and
 * handing over, leaves them behind. Every other path deletes them itself;
 * this is the safety net, run periodically by whoever runs the jobs.
 */
export class SweepLeftoversUseCase {
  constructor(
    private readonly deps: {
      storage: FileStoragePort;
      /** Older than this, no request can still be using the object (well past JOB_TIMEOUT_MS). */
      maxAgeMs: number;
      /** At most this many objects per prefix and run, so one run stays short. */
      batch?: number;
      now?: () => number;
    },
  ) {}

  async execute(): Promise<SweepResult> {
    const olderThan = new Date((this.deps.now ?? Date.now)() - this.deps.maxAgeMs);
    const deleted = { 'staging/': 0, 'pdf/': 0 };
    for (const prefix of SHORT_LIVED_PREFIXES) {
      deleted[prefix] = await this.deps.storage.deleteStale(prefix, olderThan, this.deps.batch ?? 500);
    }
    return { deleted };
  }
}
