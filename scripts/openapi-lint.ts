import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '@logi/config';
import { buildOpenApiDocument } from '@logi/api';

/**
 * Spectral with the repository's ruleset (.spectral.yaml: spectral:oas and
 * the OWASP API Security ruleset) on the document the server serves with its
 * default configuration and DOCS_BASE_URL set. Exits non-zero on any error; extra arguments go to
 * spectral (`--format json`, say).
 */
// Unset, guide links are repository paths: relative references, which OpenAPI 3.1 allows but Spectral's
// oas3-schema (format `uri`) does not; a deployment that publishes the guides sets this, as here.
const DOCS_BASE_URL = 'https://git.example.com/logi/-/blob/main';
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(buildOpenApiDocument(loadConfig({ DOCS_BASE_URL }))));
  const result = spawnSync(
    'pnpm',
    ['exec', 'spectral', 'lint', file, '--ruleset', join(root, '.spectral.yaml'), '--fail-severity', 'error', ...process.argv.slice(2)],
    { cwd: root, stdio: 'inherit' },
  );
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
