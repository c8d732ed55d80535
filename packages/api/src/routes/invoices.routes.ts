import Router from '@koa/router';
import { envelope, InvoiceNotFoundError, type DownloadEInvoiceUseCase, type DownloadInvoicePdfUseCase, type ListInvoicesUseCase } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import { invoiceDownloadDisposition, pdfContentDisposition } from '../http/content-disposition.js';
import { parsePathId, queryPairs } from '../http/path-id.js';
import { ifNoneMatchHits, sendJsonWithEtag, sendVersioned, strongEtag } from '../http/conditional.js';
import { toInvoiceListDto } from '../mappers/invoice.mapper.js';

export interface InvoiceRouteDeps {
  listInvoices: ListInvoicesUseCase;
  downloadInvoicePdf: DownloadInvoicePdfUseCase;
  downloadEInvoice: DownloadEInvoiceUseCase;
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
    sendVersioned(
      ctx,
      answer.version,
      answer.kind === 'pdf' ? { type: 'application/pdf', disposition: pdfContentDisposition(answer.invoiceNr), body: answer.pdf } : null,
    );
  });

  router.get('/invoices/:invoiceId/e-invoice', async (ctx) => {
    const invoiceId = parsePathId(ctx.params.invoiceId);
    if (invoiceId === null) throw new InvoiceNotFoundError();
    const ifNoneMatch = ctx.get('If-None-Match') || undefined;
    const answer = await deps.downloadEInvoice.execute({
      directory: ctx.state.client.directory,
      invoiceId,
      query: queryPairs(ctx.querystring),
      clientHolds: (version) => ifNoneMatchHits(ifNoneMatch, strongEtag(version)),
    });
    sendVersioned(
      ctx,
      answer.version,
      answer.kind === 'not-modified'
        ? null
        : { type: 'application/xml; charset=utf-8', disposition: invoiceDownloadDisposition(answer.invoiceNr, 'xml'), body: answer.xml },
    );
  });
}
