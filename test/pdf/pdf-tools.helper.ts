import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { allProcesses, crashDatabaseOf } from '../support/process-tree.js';

const run = promisify(execFile);

/** Text of a PDF as poppler's pdftotext extracts it, whitespace (also non-breaking) collapsed to single spaces. */
export async function pdfText(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pdf-text-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    await writeFile(file, pdf);
    const { stdout } = await run('pdftotext', ['-enc', 'UTF-8', file, '-']);
    return collapse(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Pids of Chromium browser processes started by this process (Playwright spawns them as direct children). */
export async function childChromiumPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state, ppid, ...
      const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(afterName[1]) !== process.pid || afterName[0] === 'Z') continue;
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      if (/chrom/i.test(cmdline.split('\0')[0] ?? '')) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Live Chromium crash handlers (they belong to init, not to us), each with the crash database its command line names. */
export function crashHandlers(): { pid: number; database: string }[] {
  return allProcesses()
    .filter((p) => p.state !== 'Z')
    .flatMap((p) => {
      const database = crashDatabaseOf(p);
      return database === null ? [] : [{ pid: p.pid, database }];
    });
}
