/**
 * A tiny benchmark kit: runs a candidate and its baseline in the same process,
 * interleaved, and prints medians and the ratio. Ratios, not absolute times,
 * are what carries from one machine to another.
 */
export interface BenchCase {
  name: string;
  run: () => Promise<unknown>;
}

export interface BenchResult {
  name: string;
  baselineMedianMs: number;
  candidateMedianMs: number;
  ratio: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Warms both up, then alternates them `rounds` times so drift hits both alike. */
export async function compare(name: string, baseline: BenchCase, candidate: BenchCase, rounds: number, warmup = 2): Promise<BenchResult> {
  for (let i = 0; i < warmup; i++) {
    await baseline.run();
    await candidate.run();
  }
  const b: number[] = [];
  const c: number[] = [];
  for (let i = 0; i < rounds; i++) {
    b.push(await time(baseline.run));
    c.push(await time(candidate.run));
  }
  const result = { name, baselineMedianMs: median(b), candidateMedianMs: median(c), ratio: median(b) / median(c) };
  // Progress goes to stderr; stdout carries the report's tables.
  console.error(
    `${name}: ${baseline.name} ${result.baselineMedianMs.toFixed(1)} ms, ${candidate.name} ${result.candidateMedianMs.toFixed(1)} ms ` +
      `-> ${result.ratio.toFixed(1)}x (median of ${rounds})`,
  );
  return result;
}
