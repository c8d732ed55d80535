/**
 * The last release that landed, which the current code must run beside (docs/operate/upgrading.md): its commit, its
 * version and the last migration it shipped. A release moves this forward (CHANGELOG.md, "Upgrade notes").
 */
export const PREVIOUS_RELEASE = {
  version: '1.0.0',
  commit: '0687b6c1b4d17341fc23adf9e8eedbd9db5e3f6a',
  /** Everything after it is an expand step that the previous release's API and worker must still run on. */
  lastMigration: '020-export-fair-claims',
} as const;
