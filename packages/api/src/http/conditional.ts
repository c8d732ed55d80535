import { createHash } from 'node:crypto';
import type { Context } from 'koa';

/** A weak validator of a body: its bytes hashed (SHA-256, 27 base64url characters, 160 bits). */
export function weakEtagOf(body: string | Buffer): string {
  return `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * `If-None-Match` against the response's validator, with the weak comparison
 * RFC 9110 (13.1.2) prescribes for it: `*`, or any listed tag whose opaque
 * part equals ours, `W/` or not.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const ours = etag.replace(/^W\//, '');
  if (header.trim() === '*') return true;
  for (const match of header.matchAll(/(?:W\/)?"[^"]*"/g)) {
    if (match[0].replace(/^W\//, '') === ours) return true;
  }
  return false;
}

/**
 * Sends a JSON body with its weak ETag and `Cache-Control: private, no-cache`
 * (a client may keep it, and asks each time), or 304 with no body when the
 * client already holds these bytes.
 */
export function sendJsonWithEtag(ctx: Context, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const etag = weakEtagOf(text);
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', 'private, no-cache');
  if (ifNoneMatchHits(ctx.get('If-None-Match') || undefined, etag)) {
    ctx.status = 304;
    ctx.body = null;
    return;
  }
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = text;
}

/**
 * A versioned download: a strong ETag (the version of everything in the
 * document, so the same version is the same bytes) and `private, no-cache`;
 * the document, or 304 with no body when the client holds it (`null`).
 */
export function sendVersioned(ctx: Context, version: string, document: { type: string; disposition: string; body: Buffer | string } | null): void {
  ctx.set('ETag', strongEtag(version));
  ctx.set('Cache-Control', 'private, no-cache');
  if (document === null) {
    ctx.status = 304;
    ctx.body = null;
    return;
  }
  ctx.status = 200;
  ctx.type = document.type;
  ctx.set('Content-Disposition', document.disposition);
  ctx.body = document.body;
}

export function strongEtag(version: string): string {
  return `"${version}"`;
}
