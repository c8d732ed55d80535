import Router from '@koa/router';
import { envelope, InvoiceNotFoundError, type DownloadInvoicePdfUseCase, type ListInvoicesUseCase } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import { pdfContentDisposition } from '../http/content-disposition.js';
import { parsePathId, queryPairs } from '../http/path-id.js';
import { ifNoneMatchHits, sendJsonWithEtag } from '../http/conditional.js';
import { toInvoiceListDto } from '../mappers/invoice.mapper.js';

export interface InvoiceRouteDeps {
  listInvoices: ListInvoicesUseCase;
  downloadInvoicePdf: DownloadInvoicePdfUseCase;
}

export function registerInvoiceRoutes(router: Router<AppState>, deps: InvoiceRouteDeps): void {
  router.get('/invoices', async (ctx) => {
    const result = await deps.listInvoices.execute({ directory: ctx.state.client.directory, query: queryPairs(ctx.querystring) });
    // A weak ETag of the body: a client that polls the same page gets 304 and no bytes while nothing changed.
    sendJsonWithEtag(ctx, 200, envelope(200, 'OK', toInvoiceListDto(result)));
  });

  router.get('/invoices/:invoiceId/pdf', async (ctx) => {
    const invoiceId = parsePathId(ctx.params.invoiceId);
    if (invoiceId === null) throw new InvoiceNotFoundError();
    const ifNoneMatch = ctx.get('If-None-Match') || undefined;
    const answer = await deps.downloadInvoicePdf.execute({
      directory: ctx.state.client.directory,
      invoiceId,
      query: queryPairs(ctx.querystring),
      requestId: ctx.state.requestId,
      clientHolds: (version) => ifNoneMatchHits(ifNoneMatch, strongEtag(version)),
    });
    // A strong validator: the version of everything printed, so the same version is the same document.
    ctx.set('ETag', strongEtag(answer.version));
    ctx.set('Cache-Control', 'private, no-cache');
    if (answer.kind === 'not-modified') {
      ctx.status = 304;
      ctx.body = null;
      return;
    }
    ctx.status = 200;
    ctx.type = 'application/pdf';
    ctx.set('Content-Disposition', pdfContentDisposition(answer.invoiceNr));
    ctx.body = answer.pdf;
  });
}

function strongEtag(version: string): string {
  return `"${version}"`;
}
