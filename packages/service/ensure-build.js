// Run from a checkout (`pnpm start`, `pnpm worker`, `pnpm cli`), the service builds itself first
// when the build is missing or older than the sources, so a fresh `pnpm install && pnpm start`
// starts. In the image (pnpm deploy --prod) there are no sources beside it: nothing to do.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const STAMP = path.join(ROOT, '.build-stamp');
const LOCK = path.join(ROOT, '.build-lock');
const LOCK_WAIT_MS = 10 * 60_000;

/** A line on stderr in the launchers' own words; never a stack trace. @param {string} message @returns {never} */
export function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** @param {string} file */
function newestTime(file) {
  if (!existsSync(file)) return 0;
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted source shows as its directory's change
  for (const entry of readdirSync(file)) newest = Math.max(newest, newestTime(path.join(file, entry)));
  return newest;
}

/** Why a build is needed, or null: no stamp, a package without its dist/, or a source newer than the stamp. */
function staleReason() {
  if (!existsSync(STAMP)) return 'no build yet';
  const packages = [...readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8').matchAll(/"path":\s*"packages\/([^/"]+)\//g)].map((m) => m[1]);
  const built = statSync(STAMP).mtimeMs;
  // docs/integrate: the guides the API serves, copied by the build (scripts/copy-build-assets.js).
  const inputs = ['tsconfig.base.json', 'tsconfig.build.json', 'docs/integrate'].map((file) => path.join(ROOT, file));
  for (const name of packages) {
    const dir = path.join(ROOT, 'packages', name);
    if (!existsSync(path.join(dir, 'dist', 'index.js'))) return `packages/${name} is not built`;
    inputs.push(path.join(dir, 'src'), path.join(dir, 'package.json'), path.join(dir, 'tsconfig.build.json'));
  }
  return inputs.some((input) => newestTime(input) > built) ? 'sources changed since the last build' : null;
}

function lockAcquired() {
  try {
    mkdirSync(LOCK);
    return true;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    return false;
  }
}

/** Builds when needed; two launchers started together build once (the second waits for the first). */
export function ensureBuild() {
  if (!existsSync(path.join(ROOT, 'packages', 'api', 'src')) || !existsSync(path.join(ROOT, 'scripts', 'build.js'))) return;
  const deadline = Date.now() + LOCK_WAIT_MS;
  while (staleReason() !== null) {
    if (lockAcquired()) {
      try {
        const reason = staleReason();
        if (reason === null) return;
        if (!existsSync(path.join(ROOT, 'node_modules', 'typescript')))
          fail('The service is not built and TypeScript is not installed: run `pnpm install`, then try again.');
        process.stderr.write(`==> building first (${reason}): pnpm build, about a minute\n`);
        try {
          execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], { cwd: ROOT, stdio: 'inherit' });
        } catch {
          fail('The build failed (its messages are above): fix them, or run `pnpm build` to see them again.');
        }
        return;
      } finally {
        rmSync(LOCK, { recursive: true, force: true });
      }
    }
    // A build of another launcher runs: wait for its lock to go (an abandoned lock is older than any build).
    const lockAge = Date.now() - (existsSync(LOCK) ? statSync(LOCK).mtimeMs : Date.now());
    if (lockAge > LOCK_WAIT_MS) rmSync(LOCK, { recursive: true, force: true });
    if (Date.now() > deadline) fail(`Waited ${LOCK_WAIT_MS / 60_000} minutes for another build to finish (${LOCK}); remove that directory if no build runs.`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
}

/** Imports a built entry point; a missing build is a sentence, not a stack trace. @param {string} entry */
export async function start(entry) {
  ensureBuild();
  try {
    await import(entry);
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('/dist/'))
      fail(`${entry} is not built: run \`pnpm build\` (${error.message})`);
    throw error;
  }
}
