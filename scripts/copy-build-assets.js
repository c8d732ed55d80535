// `pnpm build`'s last step: tsc emits JavaScript only, so the files beside the code that
// the code reads at run time (the invoice's Handlebars templates) are copied to dist/ at
// the same relative path, where `new URL('./invoice.hbs', import.meta.url)` finds them.
// And the integrator's guides (docs/integrate/*.md), which the API serves at /v1/guides,
// go to packages/api/dist/guides: the runtime tree (the image) has no docs/ of its own.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
/** The guides the API serves (packages/api/src/ops/docs/guide-pages.ts). */
export const GUIDES_SOURCE = path.join(ROOT, 'docs', 'integrate');

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
  const guides = path.join(ROOT, 'packages', 'api', 'dist', 'guides');
  rmSync(guides, { recursive: true, force: true });
  mkdirSync(guides, { recursive: true });
  for (const file of readdirSync(GUIDES_SOURCE)) if (file.endsWith('.md')) cpSync(path.join(GUIDES_SOURCE, file), path.join(guides, file));
}
