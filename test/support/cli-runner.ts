import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withTestSecretKey } from './test-secret-key.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `pnpm cli <args>` from the repository root, run from its TypeScript source
 * through tsx (as `pnpm dev:cli` does): the tests check the code as it is, not
 * the last `pnpm build`. test/system/runtime-tree.test.ts runs the built CLI.
 */
export function cli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'packages/api/src/cli/main.ts'), ...args],
      { cwd: ROOT, env: withTestSecretKey({ ...process.env, DATABASE_URL: '', ...env }), timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
