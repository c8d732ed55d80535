// `pnpm build`: JavaScript and declarations of what the service runs (tsc -b, incremental, in
// dependency order), the SDK's, then the files the code reads at run time copied beside it.
// Ends by writing .build-stamp, which `pnpm start`, `pnpm worker` and `pnpm cli` compare with the
// sources' times (packages/service/ensure-build.js).
import { execFileSync } from 'node:child_process';
import { utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { copyBuildAssets } from './copy-build-assets.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const started = new Date();

/** @param {string[]} args */
const run = (...args) => execFileSync(process.execPath, [tsc, ...args], { cwd: ROOT, stdio: 'inherit' });
try {
  run('-b', 'tsconfig.build.json');
  run('-p', 'packages/client/tsconfig.build.json');
} catch {
  // tsc has printed its diagnostics; its stack trace would add nothing.
  process.exit(1);
}
copyBuildAssets();
// The time the build started: a source saved while tsc ran is newer than the stamp.
const stamp = path.join(ROOT, '.build-stamp');
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
