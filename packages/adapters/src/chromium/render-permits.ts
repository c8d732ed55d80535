/** A counting semaphore: at most `size` renders hold a page at once; the rest wait in order. */
export class RenderPermits {
  private available: number;
  private readonly waiting: Array<() => void> = [];

  constructor(size: number) {
    this.available = size;
  }

  async acquire(): Promise<void> {
    if (this.available > 0) {
      this.available -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    // Hand the permit straight to the next waiter so that a new caller cannot jump the queue.
    if (next) next();
    else this.available += 1;
  }
}
