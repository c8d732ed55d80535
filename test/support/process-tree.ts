import { readdirSync, readFileSync } from 'node:fs';

/** One process as /proc shows it. `startTime` (clock ticks since boot) tells a process from a later one that reused its pid. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** R, S, D, T, Z, ... */
  state: string;
  startTime: number;
  comm: string;
  args: string[];
  /** Its nice value (-20 to 19). */
  nice: number;
}

/** A process as it was when read, or null when it is gone (or its pid now belongs to another process). */
export function readProcess(pid: number): ProcessInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm is in parentheses and may itself hold spaces or parentheses: split after the last ')'.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    let args: string[] = [];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      // exited between the two reads
    }
    return { pid, ppid: Number(fields[1]), state: fields[0]!, startTime: Number(fields[19]), comm, args, nice: Number(fields[16]) };
  } catch {
    return null;
  }
}

/** Every process on the machine. */
export function allProcesses(): ProcessInfo[] {
  const processes: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = readProcess(Number(entry));
    if (info) processes.push(info);
  }
  return processes;
}

/** The processes whose chain of parents reaches `rootPid` (the root itself not included). */
export function descendantsOf(rootPid: number, processes = allProcesses()): ProcessInfo[] {
  const children = new Map<number, ProcessInfo[]>();
  for (const p of processes) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: ProcessInfo[] = [];
  const queue = [rootPid];
  while (queue.length) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** A Chromium process (browser, zygote, GPU, utility, renderer or crash handler). */
export function isChromium(p: ProcessInfo): boolean {
  const program = p.args[0] ?? '';
  return /chrom/i.test(p.comm) || /chrom/i.test(program);
}

/** Chromium's own role flag: `renderer`, `gpu-process`, `zygote`, `utility`, ...; `browser` for the main process. */
export function chromiumRole(p: ProcessInfo): string {
  // A zygote-forked child rewrites its command line as one string with spaces (setproctitle), not one argument each.
  const flag = p.args.flatMap((arg) => arg.split(' ')).find((arg) => arg.startsWith('--type='));
  return flag ? flag.slice('--type='.length) : 'browser';
}

/** True while the very process (same pid, same start time) is alive (a zombie counts as alive). */
export function stillRunning(p: Pick<ProcessInfo, 'pid' | 'startTime'>): boolean {
  const now = readProcess(p.pid);
  return now !== null && now.startTime === p.startTime;
}

/**
 * True while the very process is alive and not a zombie. A zombie has exited;
 * one whose parent died belongs to init (PID 1), which reaps it when it gets
 * to it (tini in the image; this machine's init may take seconds).
 */
export function stillExecuting(p: Pick<ProcessInfo, 'pid' | 'startTime'>): boolean {
  const now = readProcess(p.pid);
  return now !== null && now.startTime === p.startTime && now.state !== 'Z';
}

/** The environment a process started with (empty when it is gone or not ours to read). */
export function environOf(pid: number): Record<string, string> {
  try {
    const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
    return Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
  } catch {
    return {};
  }
}

/** For a Chromium crash handler, the crash database its command line names (null for any other process). */
export function crashDatabaseOf(p: ProcessInfo): string | null {
  if (!(p.args[0] ?? '').endsWith('chrome_crashpad_handler')) return null;
  return p.args.find((arg) => arg.startsWith('--database='))?.slice('--database='.length) ?? null;
}
