// `pnpm lint`: ESLint with typescript-eslint's type-aware rules over every source, test and script.
// Formatting is Prettier's alone (`pnpm format:check`): eslint-config-prettier, last, turns off
// the rules that would fight it.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import regexp from 'eslint-plugin-regexp';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // Built output, installed packages, and code a tool writes (`pnpm client:generate`).
  globalIgnores(['**/dist/', '**/node_modules/', 'packages/client/src/generated/', 'coverage/', '.tmp/', 'data/']),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    // A disable comment that no longer silences anything goes, so each left stands for a real exception.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        // tsconfig.json covers the TypeScript and the launchers' and scripts' JavaScript; the tool
        // configs and the image test's S3 stand-in (run in its container), which no tsconfig includes,
        // get the project service's default project.
        projectService: { allowDefaultProject: ['eslint.config.js', '.dependency-cruiser.cjs', 'test/system/compose/standins/s3/server.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    rules: {
      // What this setup is for, named so that a change of preset cannot drop them: a promise nobody
      // awaits or handles, and an async function where a void callback is expected (an emitter's, Node's).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // The code's mark for a parameter kept for its position, or a field dropped from a rest copy:
      // a leading underscore.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // A variable a closure reads before its one assignment (a server's handler and the object
      // that owns the server) cannot be const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Passing on what a catch caught (`unknown`) is not inventing a non-Error reason.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Left out: an `async` method without `await` is how a class implements a port that returns a
      // promise (a throw becomes a rejection, as the port's callers expect): ~100 fakes and adapters.
      '@typescript-eslint/require-await': 'off',
      // Left out: database columns and caught errors are `unknown`, and String() is how the code turns
      // such a scalar into text; the rule reads `unknown` narrowed by `!= null` as an object (all 18
      // findings were that, none a real "[object Object]").
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    // A regular expression that backtracks super-linearly lets one request hold the event loop for
    // seconds (issue 35: `Range: bytes=0-` and 60,000 spaces cost 3 s); these two rules refuse them.
    // The plugin's recommended set is left out: its 87 findings were style (\w for [A-Za-z0-9_], the i
    // flag, unused groups), none a fault.
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': 'error',
    },
  },
  {
    files: ['test/**'],
    rules: {
      // Left out in tests: they hold HTTP and JSON bodies (`any` from fetch's json(), JSON.parse, knex
      // rows) and fixtures bent out of shape on purpose, and check them with expect(), which is the type
      // check here; a cast on each of ~350 reads would add nothing. The source keeps these rules.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  prettier,
);
