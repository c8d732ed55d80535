import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '@logi/config';
import { servedOpenApiDocument } from '@logi/api';

/**
 * Spectral with the repository's ruleset (.spectral.yaml: spectral:oas and
 * the OWASP API Security ruleset) on the document GET /v1/openapi.json serves,
 * built by the function its route uses (servedOpenApiDocument) from the
 * configuration the server reads: once with the defaults (guide links to the
 * guides the API serves, /v1/guides/...), once with DOCS_BASE_URL set (guide
 * links to the published repository). Exits non-zero on any error; extra
 * arguments go to spectral (`--format json`, say).
 */
const AS_SERVED: Record<string, Record<string, string>> = {
  defaults: {},
  'docs-base-url': { DOCS_BASE_URL: 'https://git.example.com/logi/-/blob/main' },
};
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
try {
  let failed = false;
  for (const [name, env] of Object.entries(AS_SERVED)) {
    const file = join(dir, `openapi-${name}.json`);
    // The route's body: the same document, serialised as it sends it.
    writeFileSync(file, JSON.stringify(servedOpenApiDocument(loadConfig(env))));
    const result = spawnSync(
      'pnpm',
      ['exec', 'spectral', 'lint', file, '--ruleset', join(root, '.spectral.yaml'), '--fail-severity', 'error', ...process.argv.slice(2)],
      { cwd: root, stdio: 'inherit' },
    );
    if (result.status !== 0) failed = true;
  }
  process.exitCode = failed ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
