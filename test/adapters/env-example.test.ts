import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '@logi/config';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** `NAME=value` lines of .env.example, commented out or not: the variable and its example value. */
function exampleLines(text: string): Array<{ name: string; value: string }> {
  return text
    .split('\n')
    .map((line) => /^#?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({ name: match[1]!, value: match[2]! }));
}

/**
 * .env.example and docs/operate/configuration.md name every variable of the configuration schema, and nothing else
 * (issue 36: six were missing), and the example values are ones the start accepts.
 */
describe('.env.example and the configuration page against the configuration schema', () => {
  it('when .env.example is read, then it names every variable the configuration reads, and only those', async () => {
    const named = new Set(exampleLines(await readFile(path.join(ROOT, '.env.example'), 'utf8')).map((line) => line.name));
    expect(CONFIG_VARIABLES.filter((name) => !named.has(name))).toEqual([]);
    expect([...named].filter((name) => !CONFIG_VARIABLES.includes(name))).toEqual([]);
  });

  it('when docs/operate/configuration.md is read, then its table names every variable', async () => {
    const page = await readFile(path.join(ROOT, 'docs/operate/configuration.md'), 'utf8');
    const inTable = new Set(
      page
        .split('\n')
        .filter((line) => line.startsWith('| `'))
        .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]!)),
    );
    expect(CONFIG_VARIABLES.filter((name) => !inTable.has(name))).toEqual([]);
  });

  it('when each example value of .env.example is given alone, then the start accepts it', async () => {
    const lines = exampleLines(await readFile(path.join(ROOT, '.env.example'), 'utf8')).filter(
      // Files and pairs that need their partner (checked with it in their own tests).
      (line) =>
        line.value !== '' &&
        !line.value.includes('ssl-ca=') &&
        !['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME', 'DATABASE_READ_URL', 'DASHBOARD_USER', 'S3_ENDPOINT'].includes(line.name),
    );
    expect(lines.length).toBeGreaterThan(40);
    for (const { name, value } of lines) expect(() => loadConfig({ [name]: value }), `${name}=${value}`).not.toThrow();
  });
});
