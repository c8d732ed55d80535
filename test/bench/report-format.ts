/** Cells and tables of docs/benchmarks.md. */
export function ms(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 10) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(2)} ms`;
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

export function bytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(2)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(0)} MiB`;
  return `${(n / 1024).toFixed(0)} KiB`;
}

export function seconds(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return '–';
  return value >= 120 ? `${(value / 60).toFixed(1)} min` : `${value.toFixed(1)} s`;
}

export function verdict(met: boolean): string {
  return met ? '✅ met' : '❌ missed';
}

export function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function table(header: string[], rows: string[][], align?: Array<'l' | 'r'>): string {
  const sep = header.map((_, i) => ((align?.[i] ?? 'l') === 'r' ? '---:' : '---'));
  return [header, sep, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

export function when(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

/** The targets of the parts reported in benchmarks.md by report.ts and pdf-report.ts (issue 8). */
export const TARGETS = {
  queryRatio: 3,
  listFloor: 0.5,
  pdf: 0.75,
  pdfCached: 20,
  upload: 0.6,
};

/** A job's wait in its queue; null where the API runs its jobs itself. */
export function queueWait(waitMs: number | null): string {
  return waitMs === null ? 'none (in the API)' : ms(waitMs);
}
