import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'domain', include: ['test/domain/**/*.test.ts'] } },
      { extends: true, test: { name: 'adapters', include: ['test/adapters/**/*.test.ts'] } },
      { extends: true, test: { name: 'pdf', include: ['test/pdf/**/*.test.ts'] } },
      { extends: true, test: { name: 'api', include: ['test/api/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          // The same API tests on MariaDB, Redis, an S3 server and a real worker process.
          name: 'api-production',
          include: ['test/api/**/*.test.ts'],
          exclude: ['test/api/docs-page.test.ts', 'test/api/openapi.test.ts', 'test/api/metrics.test.ts', 'test/api/health.test.ts', 'test/api/cli.test.ts', 'test/api/error-handling.test.ts', 'test/api/request-log.test.ts', 'test/api/dashboard.test.ts', 'test/api/queue-depth-metrics.test.ts'],
          env: { API_TEST_PROFILE: 'production' },
        },
      },
      { extends: true, test: { name: 'system', include: ['test/system/**/*.test.ts'] } },
    ],
  },
});
