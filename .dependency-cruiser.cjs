// The layer rules of docs/contribute/architecture.md, checked by `pnpm deps:check` (scripts/test.sh
// runs it after the type check) and by test/domain/layer-rules.test.ts, which also proves a broken
// rule is reported. Paths are relative to the repository root; `@logi/*` resolve through tsconfig.json.

/** Infrastructure the domain never imports: databases, queues, storage, browsers, HTTP, DI, templates, logs. */
const INFRASTRUCTURE = [
  'koa',
  '@koa/[^/]+',
  'koa-[^/]+',
  'knex',
  'mysql2',
  'better-sqlite3',
  'ioredis',
  'bullmq',
  'bullmq-otel',
  'minio',
  'playwright-core',
  'playwright',
  'inversify',
  'reflect-metadata',
  'handlebars',
  'pino',
  'prom-client',
  '@opentelemetry/[^/]+',
  'file-type',
  'undici',
];

/** What the domain may import: pure libraries (validation, dates, IP addresses) and their types. */
const DOMAIN_LIBRARIES = ['zod', 'luxon', '@types/luxon', 'ipaddr[.]js', 'lru-cache'];

/**
 * Each process's composition root: the only files of api and worker that import @logi/adapters.
 * The API's is container.ts (with its operations part, ops/ops.bindings.ts) and main.ts; the
 * operator CLI's is cli/run-cli.ts; the worker's is container.ts and main.ts.
 */
const COMPOSITION_ROOTS = [
  '^packages/api/src/(main|container)[.]ts$',
  '^packages/api/src/ops/ops[.]bindings[.]ts$',
  '^packages/api/src/cli/run-cli[.]ts$',
  '^packages/worker/src/(main|container)[.]ts$',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-imports-nothing-of-ours',
      comment: 'The domain is pure: no other package of this repository (@logi/*).',
      severity: 'error',
      from: { path: '^packages/domain/' },
      to: { path: '^packages/(?!domain/)' },
    },
    {
      name: 'domain-no-infrastructure',
      comment: 'The domain imports no infrastructure package; adapters implement its ports.',
      severity: 'error',
      from: { path: '^packages/domain/' },
      // Resolved (node_modules/knex/...) or not even installed for the domain (knex).
      to: { path: `(^|/node_modules/)(${INFRASTRUCTURE.join('|')})(/|$)` },
    },
    {
      name: 'domain-only-pure-libraries',
      comment: 'Beyond that, the domain uses only the pure libraries its package.json lists, and no Node built-in.',
      severity: 'error',
      from: { path: '^packages/domain/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown', 'unknown', 'undetermined'],
        pathNot: `(^|/node_modules/)(${DOMAIN_LIBRARIES.join('|')})(/|$)`,
      },
    },
    {
      name: 'domain-no-node-builtins',
      comment: "No file system, network or process in the domain: those are the adapters' to reach.",
      severity: 'error',
      from: { path: '^packages/domain/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'config-imports-nothing-of-ours',
      comment: '@logi/config (the configuration type and loading) depends on no other package of ours, so every package may use it.',
      severity: 'error',
      from: { path: '^packages/config/' },
      to: { path: '^packages/(?!config/)' },
    },
    {
      name: 'adapters-only-in-composition-roots',
      comment: 'api and worker meet adapters through what their composition root hands them (style guide, "Shape").',
      severity: 'error',
      from: { path: '^packages/(api|worker)/', pathNot: COMPOSITION_ROOTS },
      to: { path: '^packages/adapters/' },
    },
    {
      name: 'adapters-below-the-edges',
      comment: 'Adapters implement ports for the processes; they import no process (api, worker), the SDK or the launchers.',
      severity: 'error',
      from: { path: '^packages/adapters/' },
      to: { path: '^packages/(api|worker|client|service)/' },
    },
    {
      name: 'processes-apart',
      comment: 'The API and the worker share code through domain, adapters and config, never through each other.',
      severity: 'error',
      from: { path: '^packages/(api|worker)/' },
      to: { path: '^packages/(api|worker)/', pathNot: '^packages/$1/' },
    },
    {
      name: 'client-imports-only-its-generated-types',
      comment: 'The SDK ships alone: its code imports none of our packages, only its own files (the generated OpenAPI types among them).',
      severity: 'error',
      from: { path: '^packages/client/src/' },
      to: { path: '^packages/(?!client/src/)' },
    },
    {
      name: 'packages-never-import-tests',
      comment: 'Test helpers and fixtures stay out of what ships.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^test/' },
    },
    {
      name: 'no-circular',
      comment: 'No module reaches itself through its imports, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'Every import resolves (a typo or a missing dependency fails here, not at run time). The launchers import the built dist/, which is not cruised.',
      severity: 'error',
      from: { pathNot: '^packages/service/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Not cruised: the build's output, and the packages' installed dependencies (a dependency on one is
    // still seen, as a module not followed, so the rules on npm packages can judge it).
    exclude: { path: '^packages/[^/]+/(dist|node_modules)/' },
    doNotFollow: { path: '(^|/)node_modules/' },
    // Type-only imports count: a type from adapters couples a file to adapters as much as a value does.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.cjs', '.mjs', '.d.ts', '.json'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
