/**
 * A progress bar on stderr: redrawn in place on a terminal, a line every
 * 10 % otherwise (CI logs). No dependency needed for one line of text.
 */
export class Progress {
  private readonly started = Date.now();
  private lastDecile = -1;
  private lastDraw = 0;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly unit = 'rows',
  ) {
    this.update(0);
  }

  update(done: number): void {
    const fraction = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const elapsed = (Date.now() - this.started) / 1000;
    const eta = fraction > 0 ? (elapsed / fraction) * (1 - fraction) : NaN;
    const text = `${this.label} ${bar(fraction)} ${(fraction * 100).toFixed(0).padStart(3)}% ${done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} ${this.unit} ${elapsed.toFixed(0)}s${Number.isFinite(eta) && fraction < 1 ? ` eta ${eta.toFixed(0)}s` : ''}`;
    if (process.stderr.isTTY) {
      const now = Date.now();
      if (now - this.lastDraw < 100 && fraction < 1) return;
      this.lastDraw = now;
      process.stderr.write(`\r${text}\x1b[K`);
    } else {
      const decile = Math.floor(fraction * 10);
      if (decile === this.lastDecile) return;
      this.lastDecile = decile;
      process.stderr.write(`${text}\n`);
    }
  }

  finish(note = ''): number {
    this.update(this.total);
    const seconds = (Date.now() - this.started) / 1000;
    if (process.stderr.isTTY) process.stderr.write(`${note ? ` ${note}` : ''}\n`);
    else if (note) process.stderr.write(`${this.label} ${note}\n`);
    return seconds;
  }
}

function bar(fraction: number, width = 28): string {
  const full = Math.round(fraction * width);
  return `[${'#'.repeat(full)}${'-'.repeat(width - full)}]`;
}

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank on the sorted samples, interpolated between neighbours.
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

export function median(values: number[]): number {
  return percentile(values, 50);
}
