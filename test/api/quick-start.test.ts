import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';

/**
 * A newcomer's first minutes: the commands the README and the guides under
 * docs/ show and the ones demo.sh prints (scripts/lib/demo-examples.sh),
 * pasted into a shell as they stand, against a server with the demo data.
 * Only the address changes: the examples name port 3000 and metrics on 9464,
 * which this machine's other tests may hold.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * A fenced block that needs another setup than the demo server (the production
 * profile, Sentinel) is preceded by this comment with its reason; its commands
 * are not pasted. Every other block's `curl` commands are.
 */
const NOT_FOR_DEMO = /^<!-- quick-start: skip \((?<reason>[^)]+)\) -->$/;

let api: TestApi;
let port: string;
let metricsPort: string;
let cwd: string;

beforeAll(async () => {
  metricsPort = String(await freePort());
  const demo = JSON.parse(await readFile(path.join(ROOT, 'fixtures/demo.json'), 'utf8')) as Parameters<typeof loadFixtures>[1];
  api = await startTestApi(
    { METRICS_PORT: metricsPort },
    {
      profile: 'embedded',
      label: 'quick-start',
      beforeStart: (_dataDir, { knex }) => loadFixtures(knex, demo, { hasher: new Sha256ApiKeyHasher() }).then(() => undefined),
    },
  );
  port = new URL(api.root).port;
  // Downloads land here; the README's relative paths (fixtures/samples/...) hold as from the repository root.
  cwd = await mkdtemp(path.join(os.tmpdir(), 'logi-quick-start-'));
  await symlink(path.join(ROOT, 'fixtures'), path.join(cwd, 'fixtures'));
});

afterAll(async () => {
  await api?.stop();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

/** Each `curl` command in a text, with the lines its trailing backslashes join to it; blocks marked NOT_FOR_DEMO are left out. */
function curlCommands(text: string): string[] {
  const lines = text.split('\n');
  const commands: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (NOT_FOR_DEMO.test(lines[i]!.trim())) {
      // The marked block: from its opening fence (after blank lines, which Prettier puts there) to its closing one.
      const marker = lines[i];
      i++;
      while (i < lines.length && lines[i]!.trim() === '') i++;
      if (!lines[i]?.startsWith('```')) throw new Error(`a quick-start skip marker not followed by a fenced block: ${marker}`);
      i++;
      while (i < lines.length && !lines[i]!.startsWith('```')) i++;
      continue;
    }
    if (!/^\s*curl /.test(lines[i]!)) continue;
    let command = lines[i]!.trim();
    while (command.endsWith('\\') && i + 1 < lines.length) command = `${command.slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
    commands.push(command);
  }
  return commands;
}

interface Pasted {
  command: string;
  status: number;
  exitCode: number;
  /** What curl or the shell said on stderr (curl -s says nothing unless something went wrong). */
  stderr: string;
  body: string;
}

/** Runs a command as bash would run it pasted; curl adds the HTTP status on stderr. */
function paste(command: string): Promise<Pasted> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', `${command} -w '%{stderr}\\n%{http_code}'`], { cwd, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const lines = stderr.trimEnd().split('\n');
      const exitCode = error ? Number((error as { code?: unknown }).code ?? 1) : 0;
      resolve({ command, status: Number(lines.at(-1)), exitCode, stderr: lines.slice(0, -1).join('\n').trim(), body: stdout.slice(0, 300) });
    });
  });
}

/** The pasted commands that did not work: not a 2xx, a failing exit, or a word on stderr. */
async function failing(commands: string[]): Promise<Pasted[]> {
  const results: Pasted[] = [];
  for (const command of commands) results.push(await paste(command));
  return results.filter((result) => result.status < 200 || result.status > 299 || result.exitCode !== 0 || result.stderr !== '');
}

/** README.md and every Markdown page under docs/, as paths from the repository root. */
async function docPages(): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, 'docs'), { recursive: true, withFileTypes: true });
  const pages = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
  return ['README.md', ...pages.sort()];
}

describe('the quick start', () => {
  it('when every command demo.sh prints is pasted, then each answers 2xx, uploads of the shipped samples included', async () => {
    const printed = await new Promise<string>((resolve, reject) =>
      execFile(
        'bash',
        [path.join(ROOT, 'scripts/lib/demo-examples.sh')],
        { env: { ...process.env, HOST: '127.0.0.1', PORT: port, METRICS_PORT: metricsPort } },
        (error, stdout) => (error ? reject(new Error(`demo-examples.sh failed: ${error.message}`, { cause: error })) : resolve(stdout)),
      ),
    );
    const commands = curlCommands(printed);
    // A list, the lookup by number, categories, two uploads, three downloads and the metrics.
    expect(commands.length).toBe(9);
    expect(commands.filter((command) => command.includes('/orders/by-nr?nr='))).toHaveLength(1);
    const uploads = commands.filter((command) => command.includes('files=@'));
    expect(uploads).toHaveLength(2);
    for (const upload of uploads) expect(upload).toMatch(/files=@\/\S+\/fixtures\/samples\/(cmr\.pdf|delivery-note\.jpg)'/);
    expect(commands.filter((command) => command.includes(`:${metricsPort}/metrics`))).toHaveLength(1);

    expect(await failing(commands)).toEqual([]);
  });

  // About twenty commands, four of them PDF renders, pasted one after another: more than the default 30 s on a busy machine.
  it("when every curl command of the README and of each docs page is pasted (its ports made this server's), then each answers 2xx", async () => {
    const pages = await docPages();
    // Every guide of the two readers who paste commands is read, not only those that hold one today.
    for (const section of ['integrate', 'operate']) {
      expect(pages.filter((page) => page.startsWith(`docs/${section}/`)).length).toBeGreaterThanOrEqual(7);
    }
    const perPage = await Promise.all(pages.map(async (page) => ({ page, commands: curlCommands(await readFile(path.join(ROOT, page), 'utf8')) })));
    const commands = perPage
      .flatMap(({ commands }) => commands)
      .map((command) => command.replace(/(localhost|127\.0\.0\.1):3000\b/g, `127.0.0.1:${port}`).replace(/127\.0\.0\.1:9464\b/g, `127.0.0.1:${metricsPort}`));
    expect(perPage.find(({ page }) => page === 'README.md')?.commands.length).toBeGreaterThanOrEqual(4);
    expect(commands.length).toBeGreaterThanOrEqual(15);
    expect(commands.filter((command) => command.includes('files=@'))).not.toHaveLength(0);
    expect(await failing(commands)).toEqual([]);
  }, 90_000);

  it('when a block is marked as needing another setup, then its marker gives a reason and its commands are left out', () => {
    const text = [
      '```sh',
      'curl -s http://127.0.0.1:3000/health/live',
      '```',
      '<!-- quick-start: skip (needs REDIS_SENTINELS) -->',
      '```sh',
      'curl -s http://127.0.0.1:3000/admin/queues',
      '```',
    ].join('\n');
    expect(curlCommands(text)).toEqual(['curl -s http://127.0.0.1:3000/health/live']);
    // As Prettier lays it out: a blank line between the marker and its block.
    expect(curlCommands(text.replace('-->\n', '-->\n\n'))).toEqual(['curl -s http://127.0.0.1:3000/health/live']);
    expect(() => curlCommands('<!-- quick-start: skip (no block follows) -->\ntext')).toThrow(/not followed by a fenced block/);
  });
});
