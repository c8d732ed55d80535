import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two groups, one after the other. The first runs two test files at a time:
 * most of their time is spent waiting on a database, a server or a child
 * process, and each file has its own databases, Redis prefixes, storage
 * directories and ports. The second runs one file at a time: the PDF
 * renderer's time limits and the system tests (processes killed, paused,
 * counted; 50 PDFs at once) measure the machine and need it to themselves.
 */
const PARALLEL = { maxWorkers: 2, sequence: { groupOrder: 0 } };
const ALONE = { maxWorkers: 1, sequence: { groupOrder: 1 } };

export default defineConfig({
  // The tests run the packages' TypeScript sources: the `paths` of tsconfig.json, as for tsc and tsx.
  resolve: { tsconfigPaths: true },
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A temp dir per run, and the run fails on a logi-* entry left in it.
    globalSetup: ['test/support/temp-dir-check.ts'],
    projects: [
      { extends: true, test: { name: 'domain', include: ['test/domain/**/*.test.ts'], ...PARALLEL } },
      { extends: true, test: { name: 'adapters', include: ['test/adapters/**/*.test.ts'], ...PARALLEL } },
      { extends: true, test: { name: 'api', include: ['test/api/**/*.test.ts'], ...PARALLEL } },
      {
        extends: true,
        test: {
          // The same API tests on MariaDB, Redis, an S3 server and a real worker process.
          name: 'api-production',
          include: ['test/api/**/*.test.ts'],
          exclude: [
            'test/api/docs-page.test.ts',
            'test/api/guides.test.ts',
            'test/api/openapi.test.ts',
            'test/api/metrics.test.ts',
            'test/api/health.test.ts',
            'test/api/cli.test.ts',
            'test/api/cli-webhooks.test.ts',
            'test/api/cli-keys.test.ts',
            'test/api/cli-after-restore.test.ts',
            // Breaks local file storage (the embedded profile's); S3 faults: test/system/exports-faults.test.ts.
            'test/api/sdk-exports-errors.test.ts',
            'test/api/webhook-targets.test.ts',
            'test/api/error-handling.test.ts',
            'test/api/request-log.test.ts',
            'test/api/dashboard.test.ts',
            'test/api/queue-depth-metrics.test.ts',
            // The embedded profile's pipeline metrics; the worker's: test/system/pipeline-metrics.test.ts.
            'test/api/pipeline-metrics.test.ts',
            'test/api/sdk-examples.test.ts',
            'test/api/sdk-generated-types.test.ts',
            'test/api/quick-start.test.ts',
            // Calls the parsers directly, with no server: the profile changes nothing (its HTTP half, hostile-headers.test.ts, runs here).
            'test/api/parsers-linear-time.property.test.ts',
          ],
          env: { API_TEST_PROFILE: 'production' },
          ...PARALLEL,
        },
      },
      { extends: true, test: { name: 'pdf', include: ['test/pdf/**/*.test.ts'], ...ALONE } },
      {
        extends: true,
        // test/system/compose/ is the image step (its own config, run by scripts/test.sh after these).
        test: { name: 'system', include: ['test/system/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/system/compose/**'], ...ALONE },
      },
    ],
  },
});
