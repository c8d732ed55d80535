import { z } from 'zod';
import { toJsonSchema } from './json-schema.js';

/**
 * A path id as a generated client should hold it: an integer. On the wire it
 * is plain digits (up to 15); anything else is not rejected as invalid but
 * names no resource, so it is a 404, as the description says. The routes read
 * it with parsePathId (http/path-id.ts), which keeps the same rule.
 */
export const pathIdSchema = (what: string) =>
  z
    .int()
    .min(1)
    .max(999_999_999_999_999)
    .meta({ description: `${what} ID: a positive integer in plain digits. Anything else (\`abc\`, \`1.5\`, \`-1\`) names no resource (404).` });

/** The path parameter of a resource id (`order_id`, `invoice_id`, `endpoint_id`). */
export const pathIdParameter = (name: string, what: string, example: number) => ({
  name,
  in: 'path',
  required: true,
  description: `${what} ID.`,
  schema: toJsonSchema(pathIdSchema(what), 'input'),
  example,
});
