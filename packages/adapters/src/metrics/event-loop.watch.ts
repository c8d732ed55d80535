export interface EventLoopWatchOptions {
  /** How often the loop is asked to turn (ms). */
  intervalMs?: number;
  /** A turn later than this (ms) is a turn on which the process could not make progress. */
  boundMs?: number;
  /** The process is not live once every turn of this long a window (ms) was late beyond the bound. */
  windowMs?: number;
}

export interface EventLoopState {
  live: boolean;
  /** How late the latest turn was (ms). */
  delayMs: number;
}

/** Defaults: a loop late by more than 2 s on every turn for 10 s cannot serve anyone (docs/operate/runbook.md#probes). */
const DEFAULTS = { intervalMs: 250, boundMs: 2_000, windowMs: 10_000 };

/**
 * Liveness as "the process can make progress", not only "it answers": a
 * timer asks the event loop to turn every `intervalMs` and notes how late each
 * turn came. One long pause (a large GC, a slow disk) is one late turn among
 * punctual ones and does not count; a loop that has not turned on time once
 * in `windowMs` does. A loop blocked right now shows as the time since its
 * last turn.
 */
export class EventLoopWatch {
  private readonly options: Required<EventLoopWatchOptions>;
  private readonly startedAt = Date.now();
  /** When the latest turn came that was within the bound (the start counts as one). */
  private lastPunctualAt = this.startedAt;
  private lastTurnAt = this.startedAt;
  private lastDelayMs = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(options: EventLoopWatchOptions = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** Starts the timer (unref'd: it never holds the process open); calling it again does nothing. */
  start(): this {
    if (this.timer) return this;
    this.lastTurnAt = Date.now();
    this.lastPunctualAt = this.lastTurnAt;
    this.timer = setInterval(() => this.turn(), this.options.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  state(now = Date.now()): EventLoopState {
    const { boundMs, intervalMs, windowMs } = this.options;
    // A turn overdue right now counts as late as it is.
    const overdueMs = Math.max(0, now - this.lastTurnAt - intervalMs);
    const delayMs = Math.max(this.lastDelayMs, overdueMs);
    const punctualAt = overdueMs > boundMs ? Math.min(this.lastPunctualAt, this.lastTurnAt) : this.lastPunctualAt;
    return { live: now - punctualAt <= windowMs, delayMs };
  }

  private turn(): void {
    const now = Date.now();
    this.lastDelayMs = Math.max(0, now - this.lastTurnAt - this.options.intervalMs);
    this.lastTurnAt = now;
    if (this.lastDelayMs <= this.options.boundMs) this.lastPunctualAt = now;
  }
}
