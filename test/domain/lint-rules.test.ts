/**
 * The repository's lint and format rules, run through ESLint's and Prettier's own APIs with the
 * repository's configuration (eslint.config.js, .prettierrc.json, .prettierignore), so a change
 * to either that stops catching a planted mistake fails here.
 */
import path from 'node:path';
import { ESLint } from 'eslint';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
// A real file of the API package, so the type-aware rules see the project tsconfig.json builds;
// lintText lints the text given, not the file's content.
const API_FILE = path.join(ROOT, 'packages/api/src/app.ts');

const PLANTED = `import type { EventEmitter } from 'node:events';

async function save(): Promise<void> {
  await Promise.resolve();
}

export function planted(emitter: EventEmitter): void {
  save();
  emitter.on('event', async () => {
    await save();
  });
}
`;

// The same code as it should be: the fire-and-forget marked, the emitter's callback not async.
const MENDED = `import type { EventEmitter } from 'node:events';

async function save(): Promise<void> {
  await Promise.resolve();
}

export function planted(emitter: EventEmitter): void {
  void save();
  emitter.on('event', () => {
    save().catch(() => undefined);
  });
}
`;

const PLANTED_REGEX = `export function planted(header: string): string[] | null {
  const match = /^\\s*a\\s*=\\s*(\\d*)\\s*-\\s*(\\d*)\\s*$/.exec(header);
  if (!match) return null;
  return [header.replace(/ +$/, '')];
}
`;

// The same, linear: a space run sits before the digits or after them, never both; a run is trimmed from its start only.
const MENDED_REGEX = `export function planted(header: string): string[] | null {
  const match = /^\\s*a\\s*=\\s*(?:(\\d+)\\s*)?-\\s*(?:(\\d+)\\s*)?$/.exec(header);
  if (!match) return null;
  return [header.replace(/(?<! ) +$/, '')];
}
`;

describe('the lint rules', () => {
  it('when API code leaves a promise floating and gives an emitter an async callback, then ESLint names both rules on their lines', async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const [planted] = await eslint.lintText(PLANTED, { filePath: API_FILE });
    const found = planted!.messages.map((message) => ({ rule: message.ruleId, line: message.line, severity: message.severity }));
    expect(found).toEqual([
      { rule: '@typescript-eslint/no-floating-promises', line: 8, severity: 2 },
      { rule: '@typescript-eslint/no-misused-promises', line: 9, severity: 2 },
    ]);
    const [mended] = await eslint.lintText(MENDED, { filePath: API_FILE });
    expect(mended!.messages).toEqual([]);
  }, 180_000);

  it('when API code holds a regular expression that backtracks super-linearly, then ESLint names the regexp rules on their lines (issue 35)', async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const [planted] = await eslint.lintText(PLANTED_REGEX, { filePath: API_FILE });
    const found = planted!.messages.map((message) => ({ rule: message.ruleId, line: message.line, severity: message.severity }));
    // The Range expression of issue 35: each `\s*` beside an empty `(\d*)` trades spaces with the next one.
    expect(found.filter((message) => message.line === 2)).toEqual([
      { rule: 'regexp/no-super-linear-backtracking', line: 2, severity: 2 },
      { rule: 'regexp/no-super-linear-backtracking', line: 2, severity: 2 },
    ]);
    // An unanchored run: tried again from each of its characters.
    expect(found.filter((message) => message.line === 4)).toEqual([{ rule: 'regexp/no-super-linear-move', line: 4, severity: 2 }]);
    expect(found.filter((message) => message.line !== 2 && message.line !== 4)).toEqual([]);
    const [mended] = await eslint.lintText(MENDED_REGEX, { filePath: API_FILE });
    expect(mended!.messages).toEqual([]);
  }, 180_000);

  it('when a path is built or generated, then ESLint skips it', async () => {
    const eslint = new ESLint({ cwd: ROOT });
    expect(await eslint.isPathIgnored(path.join(ROOT, 'packages/client/src/generated/openapi.ts'))).toBe(true);
    expect(await eslint.isPathIgnored(path.join(ROOT, 'packages/api/dist/app.js'))).toBe(true);
    expect(await eslint.isPathIgnored(API_FILE)).toBe(false);
  });
});

describe('the format rules', () => {
  it('when a snippet uses double quotes and no semicolons, then Prettier with the repository options flags it and writes it in the house form', async () => {
    const options = await prettier.resolveConfig(API_FILE);
    expect(options).toMatchObject({ singleQuote: true, semi: true, trailingComma: 'all' });
    const messy = 'const greeting = "hello"\nexport const list = [\n  greeting,\n  "world"\n]\n';
    expect(await prettier.check(messy, { ...options, filepath: API_FILE })).toBe(false);
    const formatted = await prettier.format(messy, { ...options, filepath: API_FILE });
    expect(formatted).toBe("const greeting = 'hello';\nexport const list = [greeting, 'world'];\n");
    expect(await prettier.check(formatted, { ...options, filepath: API_FILE })).toBe(true);
  });

  it('when a file is generated, then Prettier leaves it alone', async () => {
    const ignorePath = path.join(ROOT, '.prettierignore');
    const info = async (file: string) => prettier.getFileInfo(path.join(ROOT, file), { ignorePath });
    expect(await info('packages/client/src/generated/openapi.ts')).toMatchObject({ ignored: true });
    expect(await info('pnpm-lock.yaml')).toMatchObject({ ignored: true });
    expect(await info('packages/api/src/app.ts')).toMatchObject({ ignored: false, inferredParser: 'typescript' });
  });
});
