/**
 * A counting semaphore over the renderer's pages: at most `size` renders hold a page at once; the rest wait in order,
 * interactive renders before bulk ones (exports'). With `reserved` pages, bulk renders hold at most `size - reserved`
 * of them (never fewer than one), so an interactive render that comes while bulk work runs finds a page free
 * (docs/contribute/decisions/0053-worker-pools.md).
 */
export class RenderPermits {
  private available: number;
  private bulkHeld = 0;
  private readonly bulkLimit: number;
  private readonly waiting = { interactive: [] as Array<() => void>, bulk: [] as Array<() => void> };

  constructor(
    private readonly size: number,
    reserved = 0,
  ) {
    this.available = size;
    this.bulkLimit = Math.max(1, size - reserved);
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
   */
  acquire(timeoutMs: number, options: { bulk?: boolean } = {}): Promise<boolean> {
    const bulk = options.bulk ?? false;
    if (this.available > 0 && (!bulk || this.bulkHeld < this.bulkLimit)) {
      this.take(bulk);
      return Promise.resolve(true);
    }
    const line = bulk ? this.waiting.bulk : this.waiting.interactive;
    return new Promise<boolean>((resolve) => {
      const granted = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        // Leave the line, so that a later release does not hand a permit to nobody.
        const at = line.indexOf(granted);
        if (at >= 0) line.splice(at, 1);
        resolve(false);
      }, timeoutMs);
      line.push(granted);
    });
  }

  /** Gives back a permit taken with the same `bulk`. */
  release(options: { bulk?: boolean } = {}): void {
    if (options.bulk) this.bulkHeld -= 1;
    this.available += 1;
    // Handed straight to the next waiter, interactive first, so that a new caller cannot jump the line.
    const interactive = this.waiting.interactive.shift();
    if (interactive) {
      this.take(false);
      interactive();
      return;
    }
    const bulk = this.bulkHeld < this.bulkLimit ? this.waiting.bulk.shift() : undefined;
    if (bulk) {
      this.take(true);
      bulk();
    }
  }

  private take(bulk: boolean): void {
    this.available -= 1;
    if (bulk) this.bulkHeld += 1;
  }
}
