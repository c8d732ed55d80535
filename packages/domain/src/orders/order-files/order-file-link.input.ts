import { z } from 'zod';
import { ValidationError } from '../../shared/common.errors.js';
import { fieldErrorsFromZod } from '../../shared/zod-errors.js';

export const FILE_LINK_TTL_DEFAULT = 900;
/** Seven days, the longest an S3 presigned URL (signature V4) may live. */
export const FILE_LINK_TTL_MAX = 604_800;

/** The body of `POST /orders/{order_id}/files/{file_id}/link`; one schema for validation and the OpenAPI document. */
export const createFileLinkSchema = z.object({
  ttl: z
    .int({ error: 'The ttl field must be an integer.' })
    .min(1, { error: 'The ttl field must be at least 1.' })
    .max(FILE_LINK_TTL_MAX, { error: `The ttl field must not be greater than ${FILE_LINK_TTL_MAX}.` })
    .optional()
    .meta({ description: `Seconds the link works, 1 to ${FILE_LINK_TTL_MAX} (seven days); default ${FILE_LINK_TTL_DEFAULT}.` }),
});

/** A body that is not a JSON object is refused as on the webhook endpoints (422 on `body`). */
export function parseCreateFileLink(body: unknown): { ttlSeconds: number } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw ValidationError.invalidData({ body: ['The body must be a JSON object.'] });
  const parsed = createFileLinkSchema.safeParse(body);
  if (!parsed.success) throw ValidationError.invalidData(fieldErrorsFromZod(parsed.error));
  return { ttlSeconds: parsed.data.ttl ?? FILE_LINK_TTL_DEFAULT };
}
