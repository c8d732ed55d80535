import { DomainError, ExportTooLargeError, Messages, type AttachFilesUseCase, type ManageExportsUseCase, type OrderFilesUseCase } from '@logi/domain';
import type { ApiMetrics, FILE_DOWNLOAD_OUTCOMES, QUOTA_KINDS } from './api-metrics.js';

type DownloadOutcome = (typeof FILE_DOWNLOAD_OUTCOMES)[number];
type QuotaKind = (typeof QUOTA_KINDS)[number];

const DOWNLOAD_OUTCOME_BY_CODE: Record<string, DownloadOutcome> = {
  ORDER_NOT_FOUND: 'not_found',
  FILE_NOT_FOUND: 'not_found',
  FILE_LINK_INVALID: 'link_invalid',
  FILE_LINK_EXPIRED: 'link_expired',
  FILE_LINK_REVOKED: 'link_revoked',
  SERVICE_UNAVAILABLE: 'unavailable',
};

function downloadOutcomeOf(error: unknown): DownloadOutcome {
  return (error instanceof DomainError && DOWNLOAD_OUTCOME_BY_CODE[error.code]) || 'failed';
}

/** Counts a use case call's outcome, whatever it returns or throws; the call itself is unchanged. */
async function counted<T>(call: () => Promise<T>, onResult: (result: T) => void, onError: (error: unknown) => void): Promise<T> {
  let result: T;
  try {
    result = await call();
  } catch (error) {
    onError(error);
    throw error;
  }
  onResult(result);
  return result;
}

/**
 * File downloads (by the file route or a token link) and links made, counted on the API's registry. Applied on
 * activation like the other metrics decorators: the use case knows nothing of metrics.
 */
export function countFileAccess(useCase: OrderFilesUseCase, metrics: ApiMetrics): OrderFilesUseCase {
  const download = useCase.download.bind(useCase);
  const openLink = useCase.openLink.bind(useCase);
  const link = useCase.link.bind(useCase);
  const served = (kind: 'direct' | 'link') => () => metrics.fileDownloads.inc({ kind, outcome: 'served' });
  const refused = (kind: 'direct' | 'link') => (error: unknown) => metrics.fileDownloads.inc({ kind, outcome: downloadOutcomeOf(error) });
  useCase.download = (...args) => counted(() => download(...args), served('direct'), refused('direct'));
  useCase.openLink = (...args) => counted(() => openLink(...args), served('link'), refused('link'));
  useCase.link = (...args) =>
    counted(
      () => link(...args),
      (made) => metrics.fileLinksCreated.inc({ kind: made.kind }),
      () => undefined,
    );
  return useCase;
}

/** Files an upload refused because the directory's daily quota was spent: one count per file. */
export function countUploadQuotaRefusals(useCase: AttachFilesUseCase, metrics: ApiMetrics): AttachFilesUseCase {
  const execute = useCase.execute.bind(useCase);
  useCase.execute = (...args) =>
    counted(
      () => execute(...args),
      (answer) => {
        // A replayed answer refused nothing now.
        if (answer.replayed) return;
        const refused = answer.failed.filter((file) => file.error === Messages.UPLOAD_QUOTA_EXCEEDED).length;
        if (refused > 0) metrics.quotaRefusals.inc({ kind: 'upload_bytes' }, refused);
      },
      () => undefined,
    );
  return useCase;
}

function exportRefusalOf(error: unknown): QuotaKind | null {
  if (!(error instanceof DomainError)) return null;
  if (error.code === 'TOO_MANY_EXPORTS') return 'export_active';
  if (error.code === 'EXPORT_STORAGE_QUOTA_EXCEEDED') return 'export_storage';
  if (error instanceof ExportTooLargeError) return 'export_invoices';
  return null;
}

/** Exports refused by a limit: too many running, the directory's archive storage full, too many invoices. */
export function countExportRefusals(useCase: ManageExportsUseCase, metrics: ApiMetrics): ManageExportsUseCase {
  const create = useCase.create.bind(useCase);
  useCase.create = (...args) =>
    counted(
      () => create(...args),
      () => undefined,
      (error) => {
        const kind = exportRefusalOf(error);
        if (kind) metrics.quotaRefusals.inc({ kind });
      },
    );
  return useCase;
}
