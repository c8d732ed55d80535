// `pnpm build`'s last step: tsc emits JavaScript only, so the files beside the code that
// the code reads at run time (the invoice's Handlebars templates) are copied to dist/ at
// the same relative path, where `new URL('./invoice.hbs', import.meta.url)` finds them.
import { cpSync, readdirSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const PACKAGES = ['domain', 'config', 'adapters', 'worker', 'api'];

for (const name of PACKAGES) {
  const src = path.join(ROOT, 'packages', name, 'src');
  for (const file of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!file.isFile() || file.name.endsWith('.ts')) continue;
    const from = path.join(file.parentPath, file.name);
    cpSync(from, path.join(ROOT, 'packages', name, 'dist', path.relative(src, from)));
  }
}
