import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { HttpError } from '../../http/http-error.js';

/**
 * HTTP Basic authentication for operators' pages. Both sides are hashed
 * before the comparison, so it takes the same time whatever was sent and
 * however long it is: timing tells nothing about the user or the password.
 * Anything but the exact pair is 401 with a challenge, so browsers ask.
 */
export function basicAuth(credentials: { user: string; password: string }, realm: string): Middleware {
  const expected = digest(`${credentials.user}:${credentials.password}`);
  const challenge = { 'WWW-Authenticate': `Basic realm="${realm}", charset="UTF-8"`, 'Cache-Control': 'no-store' };
  return async (ctx, next) => {
    const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(ctx.get('Authorization'));
    const given = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
    // A user name cannot hold ':' (the config refuses one), so "user:password" names exactly one pair.
    if (!timingSafeEqual(digest(given), expected) || !match) throw new HttpError(401, undefined, challenge);
    await next();
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
