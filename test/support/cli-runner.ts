import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function runOnce(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile('pnpm', ['--silent', 'cli', ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: '', ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/**
 * `pnpm cli <args>` from the repository root. On these machines pnpm itself
 * now and then fails to resolve its packageManager pin before running
 * anything (ERR_PNPM_BAD_CONFIG_DEP); only that failure is retried.
 */
export async function cli(args: string[], env: Record<string, string>): Promise<CliRun> {
  let run = await runOnce(args, env);
  for (let attempt = 0; attempt < 3 && run.stderr.includes('ERR_PNPM_BAD_CONFIG_DEP'); attempt++) run = await runOnce(args, env);
  return run;
}
