import type { Context } from 'koa';
import { envelope, type FieldErrors } from '@logi/domain';

/** Routes return plain data; this wraps it in the envelope. */
export function respond(ctx: Context, status: number, message: string, data: unknown, errors?: FieldErrors): void {
  ctx.status = status;
  ctx.body = envelope(status, message, data, errors);
}
