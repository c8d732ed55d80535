import { IDEMPOTENCY_HEADER, Messages } from '@logi/domain';
import { REPLAYED_HEADER } from '../../middleware/idempotency.middleware.js';
import { ref } from './openapi-components.js';
import { COUNTED, errorResponse } from './openapi-responses.js';
import type { GuideLinks } from './guides.js';

/** The JSON routes that take `Idempotency-Key` (the idempotency middleware on their route), with the answer a retry gets again. */
const IDEMPOTENT_OPERATIONS: ReadonlyArray<{ method: string; path: string; success: string }> = [
  { method: 'post', path: '/exports', success: '202' },
  { method: 'post', path: '/webhook-endpoints', success: '201' },
  { method: 'post', path: '/orders/{order_id}/files/{file_id}/link', success: '201' },
];

/** The header parameter; `guide` is where what is kept, for how long, and which answers are not, is told. */
export const idempotencyKeyParameter = (guides: GuideLinks, guide: 'uploads' | 'errors-and-retries' = 'errors-and-retries') => ({
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  description: [
    'Makes a retry of this request safe: a key the client chooses (a UUID, say), one per request, scoped to the client directory and compared exactly; an empty value counts as no key.',
    'A retry with the same key and the same request gets the first answer again, with `Idempotency-Replayed: true`, and makes nothing; the same key with another request is 422, a retry while the first still runs 409.',
    `What is kept, for how long, and which answers are not: ${guides.link(guide)}.`,
  ].join(' '),
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' },
  example: '5f0c6e2a-3b8e-4a51-9d0e-7c1b2a9f4e11',
});

export const replayedHeader = (what: string) => ({
  description: `Sent (\`true\`) only when this is the kept answer of an earlier request with the same \`Idempotency-Key\`; nothing was ${what} by this request.`,
  required: false,
  schema: { type: 'string', const: 'true' },
});

export const idempotencyKeyInUse = () =>
  errorResponse(
    409,
    'A request with the same `Idempotency-Key` and the same content is still running; nothing was done. Send it again after `Retry-After` to get its answer.',
    Messages.IDEMPOTENCY_KEY_IN_USE,
    [...COUNTED, 'Retry-After'],
  );

const KEY_MESSAGES = [Messages.IDEMPOTENCY_KEY_TOO_LONG, Messages.IDEMPOTENCY_KEY_INVALID, Messages.IDEMPOTENCY_KEY_REUSED];

interface JsonContent {
  description: string;
  content: { 'application/json': { schema: unknown; example?: unknown } };
  [more: string]: unknown;
}

/**
 * Each idempotent operation with the header parameter, `Idempotency-Replayed`
 * on its success, the 409 of a key still in use, and its 422 widened to the
 * key's own (whose `errors` name `Idempotency-Key`). Declared here once for
 * the three, as the middleware is one.
 */
export function withIdempotencyKeys<T extends Record<string, Record<string, unknown>>>(paths: T, guides: GuideLinks): T {
  const result: Record<string, Record<string, unknown>> = { ...paths };
  for (const { method, path, success } of IDEMPOTENT_OPERATIONS) {
    const operation = result[path]?.[method] as { parameters?: unknown[]; responses: Record<string, JsonContent> } | undefined;
    if (!operation) throw new Error(`The OpenAPI document has no ${method} ${path} to declare Idempotency-Key on`);
    const ok = operation.responses[success]!;
    const invalid = operation.responses['422']!;
    const keyInvalid = {
      allOf: [ref('ValidationErrorEnvelope'), { properties: { message: { enum: KEY_MESSAGES }, errors: { required: [IDEMPOTENCY_HEADER] } } }],
    };
    result[path] = {
      ...result[path],
      [method]: {
        ...operation,
        parameters: [...(operation.parameters ?? []), idempotencyKeyParameter(guides)],
        responses: {
          ...operation.responses,
          [success]: { ...ok, headers: { ...(ok.headers as Record<string, unknown>), [REPLAYED_HEADER]: replayedHeader('made') } },
          '409': idempotencyKeyInUse(),
          '422': {
            ...invalid,
            description: `${invalid.description} Or an \`Idempotency-Key\` that breaks its pattern, or one already used for a different request: \`errors\` names \`Idempotency-Key\`.`,
            content: {
              'application/json': { ...invalid.content['application/json'], schema: { anyOf: [invalid.content['application/json'].schema, keyInvalid] } },
            },
          },
        },
      },
    };
  }
  return result as T;
}
