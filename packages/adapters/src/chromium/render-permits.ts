/** A counting semaphore: at most `size` renders hold a page at once; the rest wait in order. */
export class RenderPermits {
  private available: number;
  private readonly waiting: Array<() => void> = [];

  constructor(size: number) {
    this.available = size;
  }

  /**
   * Resolves true with a permit held, or false after `timeoutMs` without one:
   * a backlog must answer its callers, not hold them past their own deadlines.
   */
  acquire(timeoutMs: number): Promise<boolean> {
    if (this.available > 0) {
      this.available -= 1;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const granted = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        // Leave the line, so that a later release does not hand a permit to nobody.
        const at = this.waiting.indexOf(granted);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(false);
      }, timeoutMs);
      this.waiting.push(granted);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    // Hand the permit straight to the next waiter so that a new caller cannot jump the queue.
    if (next) next();
    else this.available += 1;
  }
}
