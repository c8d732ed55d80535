import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The image step of scripts/test.sh (test/system/compose/run.sh): this directory's test alone, after
 * the other projects, so the containers have the machine to themselves. Not part of the default run
 * (vitest.config.ts leaves test/system/compose/ out): it needs the images run.sh builds.
 */
export default defineConfig({
  root: fileURLToPath(new URL('../../..', import.meta.url)),
  resolve: { tsconfigPaths: true },
  test: {
    name: 'image',
    include: ['test/system/compose/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 600_000,
    hookTimeout: 900_000,
    globalSetup: ['test/support/temp-dir-check.ts'],
  },
});
