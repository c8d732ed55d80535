import type { Readable } from 'node:stream';
import type Router from '@koa/router';
import { envelope, ExportNotFoundError, type FileStoragePort, type ManageExportsUseCase } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import { parsePathId } from '../http/path-id.js';
import { sendRangedDownload, type ByteRange } from '../http/ranged-download.js';
import { toExportDto } from '../mappers/export.mapper.js';
import { jsonObjectBody, requestBody } from '../http/json-body.js';
import { idempotent, type IdempotencyDeps } from '../middleware/idempotency.middleware.js';

export interface ExportRouteDeps extends IdempotencyDeps {
  manageExports: ManageExportsUseCase;
  /** Where archives are read from for downloads. */
  exportStorage: FileStoragePort;
}

function exportId(raw: string | undefined): number {
  const id = parsePathId(raw);
  if (id === null) throw new ExportNotFoundError();
  return id;
}

export function registerExportRoutes(router: Router<AppState>, deps: ExportRouteDeps): void {
  const exports = deps.manageExports;
  const body = jsonObjectBody();

  router.post('/exports', body, idempotent(deps), async (ctx) => {
    const created = await exports.create(ctx.state.client.directory, requestBody(ctx));
    ctx.status = 202;
    ctx.set('Location', `/v1/exports/${created.id}`);
    ctx.body = envelope(202, 'Export queued', toExportDto(created));
  });

  router.get('/exports', async (ctx) => {
    ctx.body = envelope(200, 'OK', (await exports.list(ctx.state.client.directory)).map(toExportDto));
  });

  router.get('/exports/:exportId', async (ctx) => {
    ctx.body = envelope(200, 'OK', toExportDto(await exports.get(ctx.state.client.directory, exportId(ctx.params.exportId))));
  });

  router.delete('/exports/:exportId', async (ctx) => {
    await exports.cancel(ctx.state.client.directory, exportId(ctx.params.exportId));
    ctx.body = envelope(200, 'Export deleted', null);
  });

  router.get('/exports/:exportId/download', async (ctx) => {
    const id = exportId(ctx.params.exportId);
    const { export: found, key } = await exports.archive(ctx.state.client.directory, id);
    await sendRangedDownload(ctx, {
      size: found.size ?? 0,
      etag: `"${found.sha256}"`,
      contentType: 'application/zip',
      disposition: `attachment; filename="export-${found.id}.zip"`,
      open: (range?: ByteRange) => openArchive(deps.exportStorage, key, range),
    });
  });
}

/** The archive's bytes, or one range of them, streamed from storage (never whole in memory). */
async function openArchive(storage: FileStoragePort, key: string, range?: ByteRange): Promise<Readable> {
  return (await storage.getStream(key, range)) as Readable;
}
