import { apiKeyScopeMissingMessage } from '@logi/domain';
import { requiredScopes } from '../../http/required-scope.js';
import { errorResponse } from './openapi-responses.js';

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * Every client operation that takes a key (not the public ones, `security: []`), with the scopes it needs: `x-required-scopes`
 * (in the order a missing one is named) and a 403 naming each that can be missing. Derived from the one rule the server checks
 * (http/required-scope.ts), for every path there is, so no operation is left
 * out or states another scope than the server's. (Not as role names in
 * `security`: OpenAPI 3.1 allows them, but linters and generators read scopes
 * there as OAuth2's.)
 */
export function withRequiredScopes<T extends Record<string, Record<string, unknown>>>(paths: T): T {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([method, operation]) => {
          if (!METHODS.has(method)) return [method, operation];
          const op = operation as { responses?: Record<string, unknown>; security?: unknown[] };
          // A public operation (a file link, whose token is its credential) takes no key, so no scope.
          if (Array.isArray(op.security) && op.security.length === 0) return [method, operation];
          const scopes = requiredScopes(method, path);
          const named = scopes.map((scope) => `\`${scope}\``).join(' and ');
          return [
            method,
            {
              ...op,
              'x-required-scopes': scopes,
              responses: {
                ...op.responses,
                '403': errorResponse(
                  403,
                  `The key is valid but lacks ${scopes.length > 1 ? `one of the scopes ${named}` : `the ${named} scope`} this operation needs (the first missing one is named, in the order read, write, webhooks). Make a key that holds ${scopes.length > 1 ? 'them' : 'it'} (operators: \`pnpm cli keys:create --scopes\`).`,
                  scopes.length > 1 ? scopes.map(apiKeyScopeMissingMessage) : apiKeyScopeMissingMessage(scopes[0]!),
                ),
              },
            },
          ];
        }),
      ),
    ]),
  ) as T;
}
