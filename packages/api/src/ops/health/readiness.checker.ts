import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { withTimeout } from '@logi/domain';

/** Pause between two attempts at a dependency that failed fast. */
const RETRY_INTERVAL_MS = 100;
/** A report this young answers a call without asking the dependencies again. */
export const READINESS_MAX_AGE_MS = 1_000;

export interface DependencyCheck {
  /** Named in the 503 answer: `database`, `storage`, `job_queue`, `redis`, `pdf_renderer`. */
  name: string;
  /** Resolves when the dependency answers; any rejection means it does not. */
  probe: () => Promise<unknown>;
  timeoutMs: number;
}

export type CheckOutcome = 'ok' | 'failed' | 'timeout';

/** A read replica as its last check found it (the read replicas' own status, handed over by the root). */
export interface ReplicaStatus {
  name: string;
  state: string;
  lagSeconds: number | null;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckOutcome>;
  /** Names of the dependencies that did not answer, in check order. */
  failing: string[];
  /**
   * Read replicas (DATABASE_READ_URL) by name, as their last check found
   * them, and the names of those skipped (`degraded`). Information only: the
   * primary serves every read a replica cannot, so no replica makes the
   * process unready. Absent when none is configured.
   */
  replicas?: Record<string, { state: string; lag_seconds: number | null }>;
  degraded?: string[];
}

/**
 * Asks every dependency at once, each bounded by its own timeout, so one
 * that hangs cannot make the probe itself hang. Reasons go to the log only:
 * the endpoint is public and error texts may hold hosts or paths.
 *
 * The endpoint is public and unthrottled, so calls never drive the probes:
 * one probe runs at a time, calls during it share its answer, and a report
 * younger than `maxAgeMs` answers without asking again. A change shows
 * within `maxAgeMs` plus one probe's time.
 */
export class ReadinessChecker {
  private latest: { checks: Record<string, CheckOutcome>; failing: string[]; finishedAt: number } | null = null;
  private running: Promise<{ checks: Record<string, CheckOutcome>; failing: string[] }> | null = null;

  constructor(
    private readonly checks: readonly DependencyCheck[],
    private readonly logger: Logger,
    private readonly replicas: () => ReplicaStatus[] | null = () => null,
    private readonly maxAgeMs = READINESS_MAX_AGE_MS,
  ) {}

  async check(): Promise<ReadinessReport> {
    const { checks, failing } = await this.dependencies();
    // The replicas' state is their own checker's, already in memory: read it on each call.
    const replicas = this.replicas();
    if (!replicas) return { ready: failing.length === 0, checks, failing };
    return {
      ready: failing.length === 0,
      checks,
      failing,
      replicas: Object.fromEntries(replicas.map((r) => [r.name, { state: r.state, lag_seconds: r.lagSeconds }])),
      degraded: replicas.filter((r) => r.state !== 'ok').map((r) => r.name),
    };
  }

  /** The latest report while it is young enough, else the probe in flight, else a new probe. */
  private dependencies(): Promise<{ checks: Record<string, CheckOutcome>; failing: string[] }> {
    if (this.latest && Date.now() - this.latest.finishedAt < this.maxAgeMs) return Promise.resolve(this.latest);
    this.running ??= this.probe().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async probe(): Promise<{ checks: Record<string, CheckOutcome>; failing: string[] }> {
    const outcomes = await Promise.all(this.checks.map((check) => this.run(check)));
    const checks: Record<string, CheckOutcome> = {};
    this.checks.forEach((check, i) => (checks[check.name] = outcomes[i]!));
    const failing = this.checks.filter((_, i) => outcomes[i] !== 'ok').map((check) => check.name);
    this.latest = { checks, failing, finishedAt: Date.now() };
    return this.latest;
  }

  /**
   * A dependency that fails fast is asked again until its timeout: one that
   * is still connecting (just after start, or mid-reconnect) gets that long
   * to answer, so a probe does not flap on a reconnect. One that hangs is
   * cut off at the timeout.
   */
  private async run(check: DependencyCheck): Promise<CheckOutcome> {
    const deadline = Date.now() + check.timeoutMs;
    let lastError: unknown = null;
    for (;;) {
      const attempt = await this.attempt(check, deadline - Date.now());
      if (attempt === 'ok') return 'ok';
      if (attempt === 'timeout') {
        this.logger.warn({ dependency: check.name, timeoutMs: check.timeoutMs, lastError }, 'readiness check timed out');
        return 'timeout';
      }
      lastError = attempt.error;
      if (deadline - Date.now() <= RETRY_INTERVAL_MS) {
        this.logger.warn({ err: lastError, dependency: check.name }, 'readiness check failed');
        return 'failed';
      }
      await delay(RETRY_INTERVAL_MS);
    }
  }

  private attempt(check: DependencyCheck, budgetMs: number): Promise<'ok' | 'timeout' | { error: unknown }> {
    const answered = Promise.resolve()
      .then(check.probe)
      .then(
        () => 'ok' as const,
        (error: unknown) => ({ error }),
      );
    return withTimeout(answered, budgetMs, { onTimeout: () => 'timeout' as const });
  }
}
