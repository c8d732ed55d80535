import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const DOMAIN = path.resolve(import.meta.dirname, '../../packages/domain/src');
const ALLOWED = new Set(['zod', 'luxon', 'ipaddr.js', 'lru-cache']);

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map(async (e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : [path.join(dir, e.name)])));
  return nested.flat().filter((file) => file.endsWith('.ts'));
}

describe('domain purity', () => {
  it('when the domain imports a package, then it is one of the pure libraries it may use', async () => {
    const files = await sourceFiles(DOMAIN);
    expect(files.length).toBeGreaterThan(10);
    const offending: string[] = [];
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      const specifiers = [
        ...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/gms),
        ...text.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
        ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
      ];
      for (const match of specifiers) {
        const specifier = match[1]!;
        if (specifier.startsWith('.')) continue;
        const pkg = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        if (!ALLOWED.has(pkg)) offending.push(`${path.relative(DOMAIN, file)} imports ${specifier}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
