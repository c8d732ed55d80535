// `pnpm build`'s last step: tsc emits JavaScript only, so the files beside the code that
// the code reads at run time (the invoice's Handlebars templates) are copied to dist/ at
// the same relative path, where `new URL('./invoice.hbs', import.meta.url)` finds them.
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The packages the service runs: the references of tsconfig.build.json (`packages/NAME/...`). */
export function servicePackages() {
  const text = readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8');
  return [...text.matchAll(/"path":\s*"packages\/([^/"]+)\//g)].map((match) => match[1]);
}

export function copyBuildAssets() {
  for (const name of servicePackages()) {
    const src = path.join(ROOT, 'packages', name, 'src');
    for (const file of readdirSync(src, { recursive: true, withFileTypes: true })) {
      if (!file.isFile() || file.name.endsWith('.ts')) continue;
      const from = path.join(file.parentPath, file.name);
      cpSync(from, path.join(ROOT, 'packages', name, 'dist', path.relative(src, from)));
    }
  }
}
