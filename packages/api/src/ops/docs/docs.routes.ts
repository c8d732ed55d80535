import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppState } from '../../http/app-state.js';
import { HttpError } from '../../http/http-error.js';
import type { OpenApiDocument } from '../openapi/openapi-document.js';
import type { DocsAssets } from './docs-assets.js';
import { GUIDES_CONTENT_SECURITY_POLICY, type GuidePages } from './guide-pages.js';
import { DOCS_CONTENT_SECURITY_POLICY, DOCS_PAGE_HTML } from './docs-page.js';

/** The OpenAPI document, the page that renders it and the guides it links to: public, not rate limited. */
export function createDocsRouter(document: OpenApiDocument, assets: DocsAssets, guides: GuidePages): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const documentJson = JSON.stringify(document);

  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = documentJson;
  });

  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY);
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = DOCS_PAGE_HTML;
  });

  router.get('/docs/assets/:name', async (ctx) => {
    const asset = assets.get(ctx.params.name ?? '');
    if (!asset) throw new HttpError(404);
    const { contentType, body } = await asset;
    ctx.type = contentType;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  });

  // The integrator's guides, rendered from docs/integrate: the reference's "more info" links land here.
  router.get('/guides', async (ctx) => {
    sendGuidePage(ctx, await guides.index());
  });

  router.get('/guides/:name', async (ctx) => {
    const page = await guides.get(ctx.params.name ?? '');
    if (!page) throw new HttpError(404);
    sendGuidePage(ctx, page.html);
  });

  return router;
}

function sendGuidePage(ctx: Context, html: string): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', GUIDES_CONTENT_SECURITY_POLICY);
  ctx.set('Cache-Control', 'no-cache');
  ctx.body = html;
}
