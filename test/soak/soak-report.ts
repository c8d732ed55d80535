/** The soak's samples, the lines fitted through them, and its report: Markdown summary and RSS chart. */

export interface Sample {
  atMin: number;
  rssMiB: number;
  fds: number;
  /** V8's heap in use (the process's own metrics), null when the scrape failed. */
  heapUsedMiB: number | null;
  /** V8's committed heap and the memory of objects outside it (Buffers, native clients): where RSS can grow while the heap in use does not. */
  heapTotalMiB: number | null;
  externalMiB: number | null;
}

export interface ProfileReport {
  profile: string;
  minutes: number;
  requests: number;
  byStatus: Record<string, number>;
  noAnswer: number;
  skipped: number;
  latencyMs: Record<string, { p50: number; p99: number; n: number }>;
  processes: Record<
    string,
    {
      samples: Sample[];
      rssSlopeMiBPerMin: number;
      rssLeastSquaresMiBPerMin: number;
      heapSlopeMiBPerMin: number | null;
      heapTotalSlopeMiBPerMin: number | null;
      externalSlopeMiBPerMin: number | null;
      fdGrowth: number;
    }
  >;
  failures: string[];
}

/**
 * Theil–Sen slope: the median of the slopes between every two samples. A
 * collection in the window (RSS falls by 20 MiB, then climbs back) moves a
 * least-squares line a lot and this one hardly; a steady leak moves both.
 */
export function robustSlope(points: Array<[number, number]>): number {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i += 1) {
    for (let j = i + 1; j < points.length; j += 1) {
      const dx = points[j]![0] - points[i]![0];
      if (dx > 0) slopes.push((points[j]![1] - points[i]![1]) / dx);
    }
  }
  return slopes.length ? median(slopes) : 0;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Least-squares slope of y over x. */
export function slope(points: Array<[number, number]>): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** RSS over time, one line per profile and process. */
export function rssChart(reports: ProfileReport[]): string {
  const series = reports.flatMap((r) => Object.entries(r.processes).map(([name, p]) => ({ label: `${r.profile} ${name}`, points: p.samples })));
  const width = 720;
  const height = 320;
  const pad = { left: 56, right: 170, top: 20, bottom: 40 };
  const maxX = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.atMin)));
  const maxY = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.rssMiB))) * 1.1;
  const x = (v: number) => pad.left + (v / maxX) * (width - pad.left - pad.right);
  const y = (v: number) => height - pad.bottom - (v / maxY) * (height - pad.top - pad.bottom);
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
  const lines = series.map((s, i) => {
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${x(p.atMin).toFixed(1)},${y(p.rssMiB).toFixed(1)}`).join(' ');
    return (
      `<path d="${d}" fill="none" stroke="${colors[i % colors.length]}" stroke-width="2"/>` +
      `<text x="${width - pad.right + 10}" y="${pad.top + 18 * i + 10}" fill="${colors[i % colors.length]}" font-size="12">${s.label}</text>`
    );
  });
  const yTicks = Array.from({ length: 5 }, (_, i) => (maxY * i) / 4).map(
    (v) =>
      `<text x="${pad.left - 8}" y="${y(v) + 4}" text-anchor="end" font-size="11">${v.toFixed(0)}</text><line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/>`,
  );
  const xTicks = Array.from({ length: 6 }, (_, i) => (maxX * i) / 5).map(
    (v) => `<text x="${x(v)}" y="${height - pad.bottom + 16}" text-anchor="middle" font-size="11">${v.toFixed(1)}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...yTicks,
    ...xTicks,
    `<text x="${(pad.left + width - pad.right) / 2}" y="${height - 6}" text-anchor="middle" font-size="12">minutes</text>`,
    `<text x="14" y="${height / 2}" transform="rotate(-90 14 ${height / 2})" text-anchor="middle" font-size="12">RSS (MiB)</text>`,
    ...lines,
    '</svg>',
  ].join('\n');
}

export function markdown(reports: ProfileReport[]): string {
  const rows = reports.map((r) => {
    const latency = Object.entries(r.latencyMs)
      .map(([kind, l]) => `${kind} ${l.p50}/${l.p99}`)
      .join(', ');
    const procs = Object.entries(r.processes)
      .map(
        ([name, p]) =>
          `${name} ${p.samples[0]?.rssMiB.toFixed(0)}→${p.samples.at(-1)?.rssMiB.toFixed(0)} MiB, slope ${p.rssSlopeMiBPerMin} MiB/min ` +
          `(least squares ${p.rssLeastSquaresMiBPerMin}), V8 heap in use ${p.heapSlopeMiBPerMin ?? '?'} ` +
          `(committed ${p.heapTotalSlopeMiBPerMin ?? '?'}, external ${p.externalSlopeMiBPerMin ?? '?'}) MiB/min, fds +${p.fdGrowth}`,
      )
      .join('; ');
    return `| ${r.profile} | ${r.minutes} | ${r.requests} | ${JSON.stringify(r.byStatus)} | ${r.noAnswer} | ${latency} | ${procs} | ${r.failures.length ? r.failures.join('; ') : 'pass'} |`;
  });
  return [
    '| profile | minutes | requests | answers by status | no answer | p50/p99 ms by kind | RSS and descriptors after warm-up | verdict |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
