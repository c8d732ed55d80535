import type { Logger } from 'pino';

export interface DependencyCheck {
  /** Named in the 503 answer: `database`, `storage`, `job_queue`, `redis`, `pdf_renderer`. */
  name: string;
  /** Resolves when the dependency answers; any rejection means it does not. */
  probe: () => Promise<unknown>;
  timeoutMs: number;
}

export type CheckOutcome = 'ok' | 'failed' | 'timeout';

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckOutcome>;
  /** Names of the dependencies that did not answer, in check order. */
  failing: string[];
}

/**
 * Asks every dependency at once, each bounded by its own timeout, so one
 * that hangs cannot make the probe itself hang. Reasons go to the log only:
 * the endpoint is public and error texts may hold hosts or paths.
 */
export class ReadinessChecker {
  constructor(
    private readonly checks: readonly DependencyCheck[],
    private readonly logger: Logger,
  ) {}

  async check(): Promise<ReadinessReport> {
    const outcomes = await Promise.all(this.checks.map((check) => this.run(check)));
    const checks: Record<string, CheckOutcome> = {};
    this.checks.forEach((check, i) => (checks[check.name] = outcomes[i]!));
    const failing = this.checks.filter((_, i) => outcomes[i] !== 'ok').map((check) => check.name);
    return { ready: failing.length === 0, checks, failing };
  }

  private async run(check: DependencyCheck): Promise<CheckOutcome> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), check.timeoutMs);
    });
    const answered = Promise.resolve()
      .then(check.probe)
      .then(
        () => 'ok' as const,
        (error: unknown) => {
          this.logger.warn({ err: error, dependency: check.name }, 'readiness check failed');
          return 'failed' as const;
        },
      );
    try {
      const outcome = await Promise.race([answered, timedOut]);
      if (outcome === 'timeout') this.logger.warn({ dependency: check.name, timeoutMs: check.timeoutMs }, 'readiness check timed out');
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }
}
