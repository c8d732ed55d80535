import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time by part of the stack, read from `/proc` (Linux): every process's user and system time, grouped by what it
 * runs. Taken before and after a round, the difference divided by the round's PDFs says what one PDF costs each part,
 * and whether a ratio below a target is the machine's cores shared with the API's own work or time spent waiting.
 */
export const CPU_PARTS = ['chromium', 'api', 'worker', 's3', 'redis', 'mariadb', 'bench', 'other'] as const;
export type CpuPart = (typeof CPU_PARTS)[number];
/** Milliseconds of CPU by part, and the machine's idle milliseconds (over every core). */
export type CpuSnapshot = Record<CpuPart, number> & { idle: number };

/** Kernel clock ticks per second: 100 on every Linux this runs on (`getconf CLK_TCK`). */
const TICK_MS = 10;

/** The part a process belongs to, by its command line. Chromium's processes count as Chromium whoever started them. */
function partOf(commandLine: string, name: string): CpuPart {
  if (/chrom/i.test(name) || /chrom(e|ium)/i.test(commandLine.split(' ')[0] ?? '')) return 'chromium';
  if (commandLine.includes('packages/api/src/main.ts') || commandLine.includes('service/api.js')) return 'api';
  if (commandLine.includes('packages/worker/src/main.ts') || commandLine.includes('service/worker.js')) return 'worker';
  if (commandLine.includes('s3-process.ts')) return 's3';
  if (name === 'redis-server') return 'redis';
  if (name === 'mariadbd' || name === 'mysqld') return 'mariadb';
  if (commandLine.includes('test/bench/')) return 'bench';
  return 'other';
}

/** Reads every process's CPU time now, by part; what no live process accounts for (one that ended meanwhile included) is `other`. */
export function cpuSnapshot(): CpuSnapshot {
  const snapshot = { ...Object.fromEntries(CPU_PARTS.map((part) => [part, 0])), idle: 0 } as CpuSnapshot;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The name is in parentheses and may hold spaces; the fields after it are counted from its closing one.
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const part = partOf(commandLine, name);
      if (part !== 'other') snapshot[part] += ticks * TICK_MS;
    } catch {
      // The process ended while it was read.
    }
  }
  // The machine's own count: `other` becomes whatever its busy time holds beyond the named parts, processes that
  // ended between two snapshots included.
  const [, user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  const busy = (user! + nice! + system! + irq! + softirq! + steal!) * TICK_MS;
  snapshot.other = busy - CPU_PARTS.reduce((sum, part) => (part === 'other' ? sum : sum + snapshot[part]), 0);
  snapshot.idle = (idle! + iowait!) * TICK_MS;
  return snapshot;
}

/** What each part used between two snapshots, per unit of work (ms). */
export function cpuPer(before: CpuSnapshot, after: CpuSnapshot, units: number): CpuSnapshot {
  const per = {} as CpuSnapshot;
  for (const key of [...CPU_PARTS, 'idle'] as const) per[key] = Math.max(0, after[key] - before[key]) / units;
  return per;
}
