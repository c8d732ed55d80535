import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { withTimeout } from '@logi/domain';

/** Pause between two attempts at a dependency that failed fast. */
const RETRY_INTERVAL_MS = 100;
/** A report this young answers a call without asking the dependencies again. */
export const READINESS_MAX_AGE_MS = 1_000;

export interface DependencyCheck {
  /** Named in the answer: `database`, `storage`, `job_queue`, `redis`, `pdf_renderer`. */
  name: string;
  /**
   * `required`: the main traffic needs it (the database), so the process is
   * not ready without it. `partial`: only some requests need it (Redis,
   * storage, the renderer); without it the process is ready and reports it
   * as degraded, so a load balancer keeps sending it the lists and lookups it
   * can still serve.
   */
  need: 'required' | 'partial';
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
  /** False when a `required` dependency did not answer. */
  ready: boolean;
  checks: Record<string, CheckOutcome>;
  /** Names of the `required` dependencies that did not answer, in check order: what makes the process unready. */
  failing: string[];
  /**
   * Names of the parts that did not answer but do not make the process
   * unready: `partial` dependencies in check order, then read replicas
   * skipped (the primary serves their reads). For alerting.
   */
  degraded: string[];
  /**
   * Read replicas (DATABASE_READ_URL) by name, as their last check found
   * them. Absent when none is configured.
   */
  replicas?: Record<string, { state: string; lag_seconds: number | null }>;
}

interface DependencyReport {
  checks: Record<string, CheckOutcome>;
  failing: string[];
  degraded: string[];
}

/**
 * Readiness means the process can serve its main traffic: the database
 * answers. Every other dependency is asked too and reported as degraded when
 * it does not answer, without making the process unready
 * (docs/operate/runbook.md#probes). Asks every dependency at once, each bounded by its own timeout, so one
 * that hangs cannot make the probe itself hang. Reasons go to the log only:
 * the endpoint is public and error texts may hold hosts or paths.
 *
 * The endpoint is public and unthrottled, so calls never drive the probes:
 * one probe runs at a time, calls during it share its answer, and a report
 * younger than `maxAgeMs` answers without asking again. A change shows
 * within `maxAgeMs` plus one probe's time.
 */
export class ReadinessChecker {
  private latest: (DependencyReport & { finishedAt: number }) | null = null;
  private running: Promise<DependencyReport> | null = null;

  constructor(
    private readonly checks: readonly DependencyCheck[],
    private readonly logger: Logger,
    private readonly replicas: () => ReplicaStatus[] | null = () => null,
    private readonly maxAgeMs = READINESS_MAX_AGE_MS,
  ) {}

  async check(): Promise<ReadinessReport> {
    const { checks, failing, degraded } = await this.dependencies();
    // The replicas' state is their own checker's, already in memory: read it on each call.
    const replicas = this.replicas();
    if (!replicas) return { ready: failing.length === 0, checks, failing, degraded };
    return {
      ready: failing.length === 0,
      checks,
      failing,
      degraded: [...degraded, ...replicas.filter((r) => r.state !== 'ok').map((r) => r.name)],
      replicas: Object.fromEntries(replicas.map((r) => [r.name, { state: r.state, lag_seconds: r.lagSeconds }])),
    };
  }

  /** Each dependency's outcome at the latest finished probe, however old; null before the first one ends. */
  latestChecks(): Record<string, CheckOutcome> | null {
    return this.latest ? { ...this.latest.checks } : null;
  }

  /** The latest report while it is young enough, else the probe in flight, else a new probe. */
  private dependencies(): Promise<DependencyReport> {
    if (this.latest && Date.now() - this.latest.finishedAt < this.maxAgeMs) return Promise.resolve(this.latest);
    this.running ??= this.probe().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async probe(): Promise<DependencyReport> {
    const outcomes = await Promise.all(this.checks.map((check) => this.run(check)));
    const checks: Record<string, CheckOutcome> = {};
    this.checks.forEach((check, i) => (checks[check.name] = outcomes[i]!));
    const notAnswering = (need: DependencyCheck['need']) =>
      this.checks.filter((check, i) => check.need === need && outcomes[i] !== 'ok').map((check) => check.name);
    this.latest = { checks, failing: notAnswering('required'), degraded: notAnswering('partial'), finishedAt: Date.now() };
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
