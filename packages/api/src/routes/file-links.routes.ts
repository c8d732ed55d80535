import type Router from '@koa/router';
import type { Context } from 'koa';
import type { OrderFileDownload, OrderFilesUseCase } from '@logi/domain';
import { fileContentDisposition } from '../http/content-disposition.js';
import { strongEtag } from '../http/conditional.js';
import { sendRangedDownload } from '../http/ranged-download.js';
import type { RateLimiter } from '../middleware/rate-limiter.js';

export interface FileLinkRouteDeps {
  orderFiles: OrderFilesUseCase;
  limiter: RateLimiter;
}

/** Where the API's own file links live: outside /v1's credential gate, the token is the credential (kept out of traces: http/redact-path.ts). */
export const FILE_LINK_PATH = '/file-links/:token';

/** A stored order file as a download: streamed, with its SHA-256 as the strong ETag, ranges and 304 (ranged-download.ts). */
export async function sendOrderFile(ctx: Context, download: OrderFileDownload, cacheControl?: string): Promise<void> {
  const { file } = download;
  await sendRangedDownload(ctx, {
    size: file.size,
    etag: strongEtag(file.sha256),
    contentType: file.contentType,
    disposition: fileContentDisposition(file.name),
    ...(cacheControl ? { cacheControl } : {}),
    open: (range) => download.open(range),
  });
}

/**
 * The address the client used to reach the API: scheme and host of the
 * request, or of X-Forwarded-Proto and X-Forwarded-Host when TRUST_PROXY
 * trusts a proxy (Koa's `proxy` setting). Without a Host header (HTTP/1.0),
 * the address the connection came in on.
 */
export function requestOrigin(ctx: Context): string {
  if (ctx.host) return `${ctx.protocol}://${ctx.host}`;
  const { localAddress, localPort } = ctx.req.socket;
  const host = localAddress?.includes(':') ? `[${localAddress}]` : localAddress;
  return `${ctx.protocol}://${host}:${localPort}`;
}

/**
 * `GET /v1/file-links/{token}`: the file a signed link grants, without
 * credentials, until it expires (ADR 0040). Registered on a public router:
 * no API key; counted per IP, as requests without valid credentials are.
 */
export function registerFileLinkRoutes(router: Router, deps: FileLinkRouteDeps): void {
  router.get(FILE_LINK_PATH, async (ctx) => {
    await deps.limiter.count(ctx, `ip:${ctx.ip}`);
    const download = await deps.orderFiles.openLink(ctx.params.token ?? '');
    // Anyone holding the URL may fetch it, but no shared cache should keep a file past its link.
    await sendOrderFile(ctx, download, 'private, no-cache');
  });
}
