import { currentRenderWork } from '../shared/bulk-work.js';
import { RecentEnd } from '../shared/recent-end.js';

/** A render waiting for a page: its fair rank, when it came, and how it is told. */
interface Waiter {
  rank: number;
  seq: number;
  /** A bulk render that has yielded to interactive ones for `bulkYield.maxMs`: it takes a free page whatever runs. */
  overdue: boolean;
  granted: () => void;
}

/** How a renderer's pages are shared between interactive renders (clients') and bulk ones (exports'). */
export interface RenderPermitsOptions {
  /** Pages bulk renders leave to interactive ones (never all of them): 0 by default, where every render is bulk. */
  reserved?: number;
  /**
   * How long the `reserved` pages stay kept after the last interactive render ended (ms). Absent: always, whether
   * clients render or not. Past it, bulk renders may hold every page until an interactive render comes again, which
   * then waits for the first page a render leaves (docs/contribute/decisions/0059-a-page-kept-while-clients-render.md).
   */
  reserveHoldMs?: number;
  /**
   * How long a bulk render holds back while interactive renders run (`maxMs`; 0, the default: it never does, pages
   * bound it alone), and how long after one ends (`quietMs`).
   */
  bulkYield?: { maxMs: number; quietMs: number };
}

/**
 * A counting semaphore over the renderer's pages: at most `size` renders hold a page at once; the rest wait,
 * interactive renders before bulk ones (exports'), and within a kind by fair rank (lowest first; ties and renders
 * without a rank, first come). A worker takes more render jobs than it has pages (docs/contribute/decisions/0054-fetch-ahead-render-ranks.md),
 * so the page goes to the job the queue's fair order puts first, not to the one fetched first. With `reserved`
 * pages, bulk renders hold at most `size - reserved` of them (never fewer than one), so an interactive render that
 * comes while bulk work runs finds a page free (docs/contribute/decisions/0053-worker-pools.md); with `reserveHoldMs`,
 * only while clients render (ADR 0059). With `bulkYield`, a
 * bulk render also yields the cores: it starts on a free page only while no interactive render holds or waits for a
 * page or ended less than `quietMs` ago (the next one of a client that asks one after the other is on its way), or
 * once it has yielded `maxMs` (so that a steady stream of clients' renders slows an export but never stops it;
 * docs/contribute/decisions/0058-bulk-renders-yield.md).
 */
export class RenderPermits {
  private available: number;
  private bulkHeld = 0;
  private readonly bulkLimit: number;
  private readonly waiting = { interactive: [] as Waiter[], bulk: [] as Waiter[] };
  private seq = 0;
  private readonly bulkYield: { maxMs: number; quietMs: number };
  /** An interactive render ended less than `bulkYield.quietMs` ago. */
  private readonly quiet: RecentEnd;
  /** An interactive render ended less than `reserveHoldMs` ago; null: the reserve is always kept. */
  private readonly reserveHold: RecentEnd | null;

  constructor(
    private readonly size: number,
    options: RenderPermitsOptions = {},
  ) {
    this.available = size;
    this.bulkLimit = Math.max(1, size - (options.reserved ?? 0));
    this.bulkYield = options.bulkYield ?? { maxMs: 0, quietMs: 0 };
    this.quiet = new RecentEnd(this.bulkYield.maxMs > 0 ? this.bulkYield.quietMs : 0, () => this.handOut());
    this.reserveHold = options.reserveHoldMs === undefined ? null : new RecentEnd(options.reserveHoldMs, () => this.handOut());
  }

  /** Pages held now, those held by bulk renders, and renders waiting of each kind. */
  get state(): { held: number; bulkHeld: number; waitingInteractive: number; waitingBulk: number } {
    return {
      held: this.size - this.available,
      bulkHeld: this.bulkHeld,
      waitingInteractive: this.waiting.interactive.length,
      waitingBulk: this.waiting.bulk.length,
    };
  }

  /**
   * Resolves true with a permit held, or false after `timeoutMs` without one:
   * a backlog must answer its callers, not hold them past their own deadlines.
   * `rank`: the render's place in its kind's fair order (its job's BullMQ priority); absent, it ranks first, as
   * BullMQ takes a job without a priority before prioritized ones, and among such renders first come.
   */
  acquire(timeoutMs: number, options: { bulk?: boolean; rank?: number } = {}): Promise<boolean> {
    const bulk = options.bulk ?? false;
    const line = bulk ? this.waiting.bulk : this.waiting.interactive;
    // A free page goes at once only when nobody of the kind waits for it (which a release would have handed one).
    if (this.available > 0 && line.length === 0 && (!bulk || this.bulkMayStart(false))) {
      this.take(bulk);
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      let yieldTimer: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        rank: options.rank ?? 0,
        seq: this.seq++,
        overdue: false,
        granted: () => {
          clearTimeout(timer);
          clearTimeout(yieldTimer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        clearTimeout(yieldTimer);
        // Leave the line, so that a later release does not hand a permit to nobody.
        const at = line.indexOf(waiter);
        if (at >= 0) line.splice(at, 1);
        resolve(false);
      }, timeoutMs);
      line.push(waiter);
      if (bulk && this.bulkYield.maxMs > 0) {
        yieldTimer = setTimeout(() => {
          waiter.overdue = true;
          this.handOut();
        }, this.bulkYield.maxMs);
      }
    });
  }

  /** Gives back a permit taken with the same `bulk`. */
  release(options: { bulk?: boolean } = {}): void {
    if (options.bulk) this.bulkHeld -= 1;
    else {
      this.quiet.note();
      this.reserveHold?.note();
    }
    this.available += 1;
    this.handOut();
  }

  /**
   * Free pages handed straight to the best waiters, interactive first, so that a new caller cannot jump the line.
   * More than one page is free at once only when bulk renders held back while the last interactive render ran.
   */
  private handOut(): void {
    while (this.available > 0) {
      const interactive = takeBest(this.waiting.interactive);
      if (interactive) {
        this.take(false);
        interactive.granted();
        continue;
      }
      if (!this.bulkMayStart(this.waiting.bulk.some((w) => w.overdue))) return;
      const bulk = takeBest(this.waiting.bulk);
      if (!bulk) return;
      this.take(true);
      bulk.granted();
    }
  }

  /** Whether a bulk render may take a free page: within its bound, and no interactive render running or waiting unless it yielded long enough. */
  private bulkMayStart(overdue: boolean): boolean {
    const interactiveHeld = this.size - this.available - this.bulkHeld;
    const interactiveNow = interactiveHeld > 0 || this.waiting.interactive.length > 0;
    // The reserve is kept while clients render (or always); with none of them around, bulk renders may use every page.
    const kept = this.reserveHold === null || interactiveNow || this.reserveHold.active;
    if (this.bulkHeld >= (kept ? this.bulkLimit : this.size)) return false;
    if (this.bulkYield.maxMs === 0 || overdue) return true;
    return !interactiveNow && !this.quiet.active;
  }

  private take(bulk: boolean): void {
    this.available -= 1;
    if (bulk) this.bulkHeld += 1;
  }
}

/** Removes and returns the waiter of lowest rank, the first come among equals (the line is a few jobs per page long). */
function takeBest(line: Waiter[]): Waiter | undefined {
  if (line.length === 0) return undefined;
  let best = 0;
  for (let i = 1; i < line.length; i++) {
    const w = line[i]!;
    const b = line[best]!;
    if (w.rank < b.rank || (w.rank === b.rank && w.seq < b.seq)) best = i;
  }
  return line.splice(best, 1)[0];
}

/**
 * A page for the render running now, by what its queue put in its async context (runAsRenderWork): its kind and fair
 * rank. The wait is added to the job's `pageWaitMs`, and the job is told once it has the page (`onPage`: the queue's
 * fair virtual time moves on to it). Resolves the kind to release with, or null after `timeoutMs` without a page.
 */
export async function acquirePage(permits: RenderPermits, timeoutMs: number): Promise<{ bulk: boolean } | null> {
  const work = currentRenderWork();
  const kind = { bulk: work?.bulk ?? false };
  const waitStart = Date.now();
  const granted = await permits.acquire(timeoutMs, { ...kind, rank: work?.rank });
  if (work) work.pageWaitMs += Date.now() - waitStart;
  if (!granted) return null;
  work?.onPage?.();
  return kind;
}
