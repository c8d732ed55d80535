import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { vi } from 'vitest';
import { PREVIOUS_RELEASE } from './releases.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
/** Written last, once the release is installed and built: a directory without it is a try that died half way. */
const MARKER = '.previous-release.json';
/**
 * Each step of a cold materialisation (the install, which may compile better-sqlite3; tsc over every package) on a
 * loaded 2-core machine: measured here at 45 to 65 s for both, twice that with a compile.
 */
const STEP_TIMEOUT_MS = 7 * 60_000;
/** A lock older than this is a try that died without removing it, whatever its owner file says (pid reuse, another host). */
const STALE_LOCK_MS = 2 * STEP_TIMEOUT_MS + 60_000;

export interface Release {
  version: string;
  commit: string;
}

export interface MaterialisedRelease extends Release {
  /** The release's checkout, installed and built: `node <dir>/packages/service/api.js` runs its API. */
  dir: string;
  /** false when an earlier run had made it (the cache), true when this call did. */
  built: boolean;
  /** What this call took, waiting for another process's build included. */
  ms: number;
}

/**
 * Where materialised releases are kept, one directory per commit (its content is the commit's, so clones and worktrees
 * on one machine share it): LOGI_RELEASE_CACHE_DIR, else `$XDG_CACHE_HOME/logi/releases` (`~/.cache/logi/releases`).
 * Outside the repository on purpose: Node's module resolution from a checkout inside this one's node_modules would fall
 * back to this one's packages.
 */
export function releaseCacheDir(): string {
  if (process.env.LOGI_RELEASE_CACHE_DIR) return process.env.LOGI_RELEASE_CACHE_DIR;
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'logi', 'releases');
}

/**
 * The release's sources from this repository's history (`git archive` of its commit), its dependencies installed from
 * the pnpm store (`pnpm install --offline --frozen-lockfile`) and `pnpm build` run, kept in releaseCacheDir() so that
 * warm runs only check the marker. Two processes asking at once build once (a lock; the second waits for the marker),
 * and a try that died half way is started again from nothing (its marker is written last).
 */
export async function materialiseRelease(release: Release = PREVIOUS_RELEASE): Promise<MaterialisedRelease> {
  const started = Date.now();
  const cache = releaseCacheDir();
  const dir = path.join(cache, release.commit);
  const done = () => ({ ...release, dir, ms: Date.now() - started });
  if (await markerMatches(dir, release)) return { ...done(), built: false };
  await mkdir(cache, { recursive: true });
  const lock = `${dir}.lock`;
  // Another process may be building it: wait for its marker, or for its lock to go (it failed: this one builds).
  const state = await vi.waitFor(
    async () => {
      if (await acquireLock(lock)) return 'locked' as const;
      if (await markerMatches(dir, release)) return 'built' as const;
      throw new Error(`release ${release.version}: another process still holds ${lock}`);
    },
    { timeout: STALE_LOCK_MS + 60_000, interval: 500 },
  );
  if (state === 'built') return { ...done(), built: false };
  try {
    if (await markerMatches(dir, release)) return { ...done(), built: false };
    await build(release, dir);
    return { ...done(), built: true };
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

async function markerMatches(dir: string, release: Release): Promise<boolean> {
  try {
    const marker = JSON.parse(await readFile(path.join(dir, MARKER), 'utf8')) as { commit?: unknown };
    return marker.commit === release.commit;
  } catch {
    return false;
  }
}

/** mkdir is atomic: whoever makes the directory holds the lock; its owner file lets a dead owner's lock be taken over. */
async function acquireLock(lock: string): Promise<boolean> {
  try {
    await mkdir(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (!(await lockIsStale(lock))) return false;
    // Two waiters may both find it stale: only one rename succeeds, and the loser tries mkdir again.
    const aside = `${lock}.stale-${process.pid}`;
    try {
      await rename(lock, aside);
    } catch {
      return false;
    }
    await rm(aside, { recursive: true, force: true });
    return acquireLock(lock);
  }
  await writeFile(path.join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, host: os.hostname(), since: Date.now() }));
  return true;
}

async function lockIsStale(lock: string): Promise<boolean> {
  let owner: { pid?: number; host?: string; since?: number };
  try {
    owner = JSON.parse(await readFile(path.join(lock, 'owner.json'), 'utf8')) as typeof owner;
  } catch {
    // Made, and its owner file not written yet (or the owner died in between): judged by the directory's age.
    const { mtimeMs } = await stat(lock).catch(() => ({ mtimeMs: Date.now() }));
    return Date.now() - mtimeMs > 10_000;
  }
  if (typeof owner.since === 'number' && Date.now() - owner.since > STALE_LOCK_MS) return true;
  if (owner.host !== os.hostname() || typeof owner.pid !== 'number') return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Made in a directory of this try's own and renamed into place once built, its marker inside: a try killed half way
 * leaves only its own directory, where its orphaned children (pnpm, tsc) may still be writing, and never touches the
 * one a later try makes. (The tree holds no absolute path that running it needs: pnpm's links are relative.)
 */
async function build(release: Release, dir: string): Promise<void> {
  const present = () =>
    run('git', ['-C', ROOT, 'cat-file', '-e', `${release.commit}^{commit}`]).then(
      () => true,
      () => false,
    );
  // A shallow CI checkout: the commit is fetched from the clone's origin, if it has one that holds it.
  if (!(await present())) await run('git', ['-C', ROOT, 'fetch', '--quiet', 'origin', release.commit]).catch(() => undefined);
  if (!(await present())) {
    throw new Error(
      `release ${release.version} (commit ${release.commit}, test/support/releases.ts) is not in this clone's history: ` +
        'fetch it (`git fetch --unshallow`, or a CI checkout with the full history)',
    );
  }
  await removeDeadTries(dir);
  const work = `${dir}.partial-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    await extract(release.commit, work);
    await installAndBuild(release, work);
    await writeFile(path.join(work, MARKER), `${JSON.stringify({ ...release, builtAt: new Date().toISOString() })}\n`);
    await rm(dir, { recursive: true, force: true });
    await rename(work, dir);
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    throw error;
  }
}

/** What dead tries left (this call holds the lock, so no live try is building); one whose orphans still write is left for the next. */
async function removeDeadTries(dir: string): Promise<void> {
  const prefix = `${path.basename(dir)}.partial-`;
  for (const name of await readdir(path.dirname(dir))) {
    if (name.startsWith(prefix)) await rm(path.join(path.dirname(dir), name), { recursive: true, force: true }).catch(() => undefined);
  }
}

async function installAndBuild(release: Release, dir: string): Promise<void> {
  const env = installEnv();
  const options = { cwd: dir, env, timeout: STEP_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 };
  const install = ['install', '--frozen-lockfile', '--reporter=silent'];
  try {
    await run('pnpm', [...install, '--offline'], options);
  } catch (offline) {
    // A store that lacks a package of the release's lockfile (a machine that never installed it): the registry has it.
    try {
      await run('pnpm', [...install, '--prefer-offline'], options);
    } catch (online) {
      throw new Error(`pnpm install of release ${release.version} failed offline (${outputOf(offline)}) and online (${outputOf(online)})`, {
        cause: online,
      });
    }
  }
  try {
    await run(process.execPath, ['scripts/build.js'], options);
  } catch (error) {
    throw new Error(`the build of release ${release.version} failed: ${outputOf(error)}`, { cause: error });
  }
}

/** `git archive <commit> | tar -x -C dir`, both checked. */
async function extract(commit: string, dir: string): Promise<void> {
  const archive = spawn('git', ['-C', ROOT, 'archive', '--format=tar', commit], { stdio: ['ignore', 'pipe', 'pipe'] });
  const tar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
  archive.stdout.pipe(tar.stdin);
  const errors: string[] = [];
  archive.stderr.on('data', (chunk: Buffer) => errors.push(chunk.toString()));
  tar.stderr.on('data', (chunk: Buffer) => errors.push(chunk.toString()));
  const codes = await Promise.all([archive, tar].map((child) => new Promise<number | null>((resolve) => child.once('close', resolve))));
  if (codes.some((code) => code !== 0)) throw new Error(`git archive ${commit} | tar -x failed (${codes.join(', ')}): ${errors.join('')}`);
  if (!existsSync(path.join(dir, 'pnpm-lock.yaml'))) throw new Error(`git archive ${commit} gave no pnpm-lock.yaml`);
}

/**
 * This process's environment less what a surrounding `pnpm exec` or script sets for its own package, so the install
 * reads the release's workspace; better-sqlite3's native build finds Node's headers on the machine
 * (as scripts/lib/setup.sh sets it).
 */
function installEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_package_|npm_lifecycle_|PNPM_PACKAGE_NAME$|PNPM_SCRIPT_SRC_DIR$|NODE_OPTIONS$|VITEST)/.test(key)) continue;
    env[key] = value;
  }
  if (!env.npm_config_nodedir && existsSync('/usr/include/node/node.h')) env.npm_config_nodedir = '/usr';
  return env;
}

function outputOf(error: unknown): string {
  const { stderr, stdout, message } = error as { stderr?: string; stdout?: string; message?: string };
  return `${message ?? String(error)}\n${stdout ?? ''}${stderr ?? ''}`.trim().slice(-4_000);
}
