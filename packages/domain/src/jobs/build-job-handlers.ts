import { RenderInvoicePdfUseCase, type PdfJobStage } from '../invoices/render-invoice-pdf/render-invoice-pdf.use-case.js';
import { StoreOrderFileUseCase, type StoreJobStage } from '../orders/store-order-file/store-order-file.use-case.js';
import type { ClientRepositoryPort } from '../ports/client-repository.port.js';
import type { ContentHasherPort } from '../ports/content-hasher.port.js';
import type { FileStoragePort } from '../ports/file-storage.port.js';
import type { InvoiceRepositoryPort } from '../ports/invoice-repository.port.js';
import type { OrderFileRepositoryPort } from '../ports/order-file-repository.port.js';
import type { EInvoiceWriterPort } from '../ports/e-invoice-writer.port.js';
import type { PdfRendererPort } from '../ports/pdf-renderer.port.js';
import type { JobHandlers } from './job-definitions.js';
import { parseJobPayload } from './job-payload.schemas.js';

export interface JobHandlerDeps {
  invoices: InvoiceRepositoryPort;
  clients: ClientRepositoryPort;
  files: OrderFileRepositoryPort;
  renderer: PdfRendererPort;
  storage: FileStoragePort;
  hasher: ContentHasherPort;
  /** The version of the PDF layout (template files and renderer settings). */
  templateVersion: string;
  timeZone: string;
  /** Makes Factur-X PDFs (render jobs with `format: 'facturx'`). */
  eInvoiceWriter?: EInvoiceWriterPort;
  /** Told how long each stage of a render job took (ms): the worker's stage histogram. */
  onPdfStage?: (stage: PdfJobStage, ms: number) => void;
  /** Told how long each stage of a store job took (ms): the upload stage histogram. */
  onStoreStage?: (stage: StoreJobStage, ms: number) => void;
}

/**
 * The one set of job handlers: the in-process queue and every worker run these. Each payload is checked first
 * (`parseJobPayload`): one that fails is an InvalidJobPayloadError and touches neither storage nor the database.
 */
export function buildJobHandlers(deps: JobHandlerDeps): JobHandlers {
  const render = new RenderInvoicePdfUseCase({
    invoices: deps.invoices,
    clients: deps.clients,
    renderer: deps.renderer,
    storage: deps.storage,
    hasher: deps.hasher,
    templateVersion: deps.templateVersion,
    timeZone: deps.timeZone,
    eInvoiceWriter: deps.eInvoiceWriter,
    ...(deps.onPdfStage ? { onStage: deps.onPdfStage } : {}),
  });
  const store = new StoreOrderFileUseCase({ files: deps.files, storage: deps.storage, ...(deps.onStoreStage ? { onStage: deps.onStoreStage } : {}) });
  return {
    'render-invoice-pdf': async (payload, run) => render.execute(parseJobPayload('render-invoice-pdf', payload), run),
    'store-order-file': async (payload, run) => store.execute(parseJobPayload('store-order-file', payload), run),
  };
}
