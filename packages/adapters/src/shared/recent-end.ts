/**
 * Whether something ended less than `windowMs` ago (`active`), and a call once that window has passed with nothing
 * noted meanwhile (`onPassed`: work held back for it can go on then). `windowMs` 0: never active. The timer does not
 * keep the process alive.
 */
export class RecentEnd {
  /** Set while the window runs. */
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly onPassed: () => void,
  ) {}

  get active(): boolean {
    return this.timer !== undefined;
  }

  /** Something ended now: active for `windowMs` from here. */
  note(): void {
    if (this.windowMs <= 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.onPassed();
    }, this.windowMs);
    this.timer.unref();
  }
}
