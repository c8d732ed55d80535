import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layer rules (.dependency-cruiser.cjs) run by dependency-cruiser as
 * `pnpm deps:check` runs them: on the real tree, which breaks none, and on a
 * copy of it with planted imports, which breaks exactly the rules named.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
// Two cruises of some 300 modules on a busy machine.
const CRUISE_TIMEOUT_MS = 120_000;

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: Array<{ name: string }>;
}

interface CruiseResult {
  modules: Array<{ source: string }>;
  summary: { violations: Violation[]; error: number; totalCruised: number };
}

/** dependency-cruiser's JSON report of `packages` under `root`, with the repository's configuration. */
function cruise(root: string): Promise<CruiseResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [DEPCRUISE, 'packages', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
      { cwd: root, maxBuffer: 256 * 1024 * 1024 },
      // It exits with the number of errors found: a report with violations is an answer, not a failure.
      (error, stdout, stderr) => {
        if (stdout.trim() === '') reject(new Error(`dependency-cruiser printed no report: ${stderr || error?.message}`));
        else resolve(JSON.parse(stdout) as CruiseResult);
      },
    );
  });
}

/** The repository's packages (sources, manifests; node_modules linked, dist left out) and the files the cruise reads, in a temp dir. */
async function copyOfTree(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'logi-layer-rules-'));
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'tsconfig.base.json', 'package.json']) cpSync(path.join(ROOT, file), path.join(dir, file));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  cpSync(path.join(ROOT, 'packages'), path.join(dir, 'packages'), {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|dist)$/.test(source),
  });
  for (const name of await readdir(path.join(ROOT, 'packages'))) {
    const modules = path.join(ROOT, 'packages', name, 'node_modules');
    if (existsSync(modules)) symlinkSync(modules, path.join(dir, 'packages', name, 'node_modules'));
  }
  return dir;
}

const rulesOf = (violations: Violation[]) => [...new Set(violations.map((v) => v.rule.name))].sort();

describe('layer rules', () => {
  it(
    'when dependency-cruiser checks the packages, then no rule is broken',
    async () => {
      const result = await cruise(ROOT);
      expect(result.summary.totalCruised).toBeGreaterThan(200);
      // The rules see the sources: the composition roots and the domain's use cases are among the modules.
      const sources = result.modules.map((m) => m.source);
      expect(sources).toEqual(expect.arrayContaining(['packages/api/src/container.ts', 'packages/domain/src/index.ts', 'packages/config/src/index.ts']));
      expect(result.summary.violations).toEqual([]);
    },
    CRUISE_TIMEOUT_MS,
  );

  it(
    'when a file breaks a layer rule, then dependency-cruiser reports that rule for that file',
    async () => {
      const dir = await copyOfTree();
      try {
        const plant = (file: string, text: string) => writeFileSync(path.join(dir, file), text);
        // An api file that is not a composition root reaches adapters.
        plant('packages/api/src/routes/probe.routes.ts', "import { migrateLatest } from '@logi/adapters';\nexport const probe = migrateLatest;\n");
        // The domain imports infrastructure, an installed library it does not list, a Node built-in and a package of ours.
        plant(
          'packages/domain/src/probe.ts',
          "import type { Knex } from 'knex';\nimport type { CompilerOptions } from 'typescript';\nimport type { Mock } from 'vitest';\nimport { readFileSync } from 'node:fs';\nimport type { AppConfig } from '@logi/config';\n" +
            'export type Probe = [Knex, CompilerOptions, Mock, AppConfig, typeof readFileSync];\n',
        );
        // Two adapter files that import each other, types only.
        plant('packages/adapters/src/probe-a.ts', "import type { B } from './probe-b.js';\nexport interface A { b?: B }\n");
        plant('packages/adapters/src/probe-b.ts', "import type { A } from './probe-a.js';\nexport interface B { a?: A }\n");

        const { summary } = await cruise(dir);
        const from = (file: string) => summary.violations.filter((v) => v.from === file);
        expect(rulesOf(from('packages/api/src/routes/probe.routes.ts'))).toEqual(['adapters-only-in-composition-roots']);
        expect(rulesOf(from('packages/domain/src/probe.ts'))).toEqual([
          'domain-imports-nothing-of-ours',
          'domain-no-infrastructure',
          'domain-no-node-builtins',
          'domain-only-pure-libraries',
          // knex is not even installed for the domain.
          'not-to-unresolvable',
        ]);
        // The library rule judges what resolves, not only names it cannot find; a package whose entry is in its dist/ too.
        const libraries = from('packages/domain/src/probe.ts').filter((v) => v.rule.name === 'domain-only-pure-libraries');
        expect(libraries.map((v) => v.to).sort()).toEqual([
          expect.stringMatching(/(^|\/)node_modules\/typescript\//),
          expect.stringMatching(/(^|\/)node_modules\/vitest\/dist\//),
          'knex',
        ]);
        expect(rulesOf(from('packages/adapters/src/probe-a.ts'))).toEqual(['no-circular']);
        // Nothing else: what the copy breaks, the planted files break.
        expect(summary.violations.filter((v) => !v.from.includes('probe'))).toEqual([]);
        expect(summary.violations.every((v) => v.rule.severity === 'error')).toBe(true);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    CRUISE_TIMEOUT_MS,
  );
});
