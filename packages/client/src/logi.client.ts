import createFetchClient, { type Client } from 'openapi-fetch';
import { apiErrorOf, ExportFailedError } from './api.errors.js';
import { downloadedFile, streamedFile, type DownloadedFile, type StreamedFile } from './downloaded-file.js';
import { EventStream, type FollowEventsOptions } from './event-stream.js';
import type { paths } from './generated/openapi.js';
import { retryingFetch, type RetryOptions } from './retrying.fetch.js';
import type {
  AttachFilesPayload,
  CreateExportBody,
  Export,
  CreatedWebhookEndpoint,
  CreateWebhookEndpointBody,
  EInvoiceOptions,
  EventPage,
  FileCategory,
  FileLink,
  InvoiceList,
  InvoicePdfOptions,
  ListEventsQuery,
  ListInvoicesQuery,
  ListWebhookDeliveriesQuery,
  OrderFile,
  OrderLookup,
  ReplayResult,
  ReplayWebhookEventsBody,
  UpdateWebhookEndpointBody,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookSecret,
} from './schema.types.js';
import { toFile, type UploadSource } from './upload-source.js';

export interface ClientOptions {
  /** The API's base address, `/v1` included: `https://api.example.com/v1`. */
  baseUrl: string;
  /** The API key (sent as `Authorization: Bearer <token>`). */
  token: string;
  /** The client directory the key belongs to (sent as `X-Client-Directory`). */
  clientDirectory: string;
  /** Resend after 429 and 503, honouring `Retry-After`; off unless given (`true` for the defaults). */
  retry?: RetryOptions | boolean;
  /** Another fetch (a proxy agent, a test double); the global one by default. */
  fetch?: typeof fetch;
}

export interface UploadOptions {
  /** A file category id (`orders.fileCategories()`); none by default. */
  categoryId?: number | null;
  /** Makes a retry safe: a repeat with the same key and files gets the first answer again and stores nothing. */
  idempotencyKey?: string;
}

/** For a call that makes something (an export, a webhook endpoint, a file link). */
export interface IdempotencyOptions {
  /** Makes a retry safe: a repeat with the same key and body gets the first answer again (`Idempotency-Key`) and makes nothing. */
  idempotencyKey?: string;
}

export interface FileDownloadOptions {
  /** Only these bytes (inclusive; `end` omitted: to the end of the file). The answer's `range` says what came. */
  range?: { start: number; end?: number };
  /** With `range`: the `etag` of the part already held; if the file changed since, the whole file comes (`range` null). */
  ifRange?: string;
}

export interface FileLinkOptions extends IdempotencyOptions {
  /** Seconds the link works, 1 to 604800; 900 when not given. */
  ttl?: number;
}

export interface WaitExportOptions {
  /** Called with the export on each look while it is queued or running (`done` of `total`). */
  onProgress?: (item: Export) => void;
  /** How often to look; 1000 ms by default. */
  intervalMs?: number;
  signal?: AbortSignal;
}

/** Where `exports.download` writes: a WHATWG `WritableStream`, or a Node.js writable (`fs.createWriteStream`). */
export type DownloadTarget =
  WritableStream<Uint8Array> | { write(chunk: Uint8Array): boolean; once(event: 'drain', listener: () => void): unknown; end(callback?: () => void): unknown };

export interface LogiClient {
  invoices: {
    /** A page of invoices with its pagination. */
    list(query?: ListInvoicesQuery): Promise<InvoiceList>;
    /** The invoice as PDF, with the download name the server gives it. */
    downloadPdf(invoiceId: number, options?: InvoicePdfOptions): Promise<DownloadedFile>;
    /** The invoice as an EN 16931 e-invoice (UBL by default, or CII), XML bytes with the server's file name. */
    downloadEInvoice(invoiceId: number, options?: EInvoiceOptions): Promise<DownloadedFile>;
  };
  orders: {
    /** The order whose number matches `nr` best (exact, else the first containing it). */
    findByNr(nr: string): Promise<OrderLookup>;
    fileCategories(): Promise<FileCategory[]>;
    /** Uploads files to an order; files that could not be stored are listed in `failed` of the answer. */
    uploadFiles(orderId: number, files: readonly UploadSource[], options?: UploadOptions): Promise<AttachFilesPayload>;
  };
  files: {
    /** The order's files, oldest first. */
    list(orderId: number): Promise<OrderFile[]>;
    /** A file's bytes as a stream (all, or one range), with its name, type and `etag`. */
    download(orderId: number, fileId: number, options?: FileDownloadOptions): Promise<StreamedFile>;
    /** A URL anyone holding it can GET without credentials until `expires`. */
    link(orderId: number, fileId: number, options?: FileLinkOptions): Promise<FileLink>;
  };
  events: {
    /** One page of the change feed past `after` (`wait`: long poll up to 30 s); a 410 is thrown as `EventsExpiredError`. */
    list(query?: ListEventsQuery): Promise<EventPage>;
    /**
     * Every event past `after`, in order, as an async iterable that long-polls
     * when the feed is quiet and ends when `signal` aborts; its `cursor` is the
     * id of the last event yielded (save it, resume with `after`). A 410 is
     * thrown from the loop as `EventsExpiredError`: resync from an export, then follow from its `events_cursor`.
     */
    follow(options?: FollowEventsOptions): EventStream;
  };
  webhooks: {
    /** A new endpoint; its `secret` (to verify deliveries with `verifyWebhook`) is shown only here. */
    create(body: CreateWebhookEndpointBody, options?: IdempotencyOptions): Promise<CreatedWebhookEndpoint>;
    /** Every endpoint, oldest first, without secrets. */
    list(): Promise<WebhookEndpoint[]>;
    get(endpointId: number): Promise<WebhookEndpoint>;
    /** Changes any of `url`, `event_types`, `description`, `enabled` (`true` also clears `disabled_reason`). */
    update(endpointId: number, changes: UpdateWebhookEndpointBody): Promise<WebhookEndpoint>;
    delete(endpointId: number): Promise<void>;
    /** A new secret; the old one keeps signing too for 24 hours, so receivers switch without missing a delivery. */
    rotateSecret(endpointId: number): Promise<WebhookSecret>;
    /** Delivery attempts, newest first; pass `next_after` as `after` for the older ones. */
    deliveries(endpointId: number, query?: ListWebhookDeliveriesQuery): Promise<WebhookDeliveryPage>;
    /** Sends every kept event past `after` that the endpoint takes again; a 410 (already removed) is `EventsExpiredError`. */
    replay(endpointId: number, body: ReplayWebhookEventsBody): Promise<ReplayResult>;
  };
  exports: {
    /** Queues an export of the invoices matching `filters`; the answer already holds `events_cursor` (follow the feed from it after importing). */
    create(body?: CreateExportBody, options?: IdempotencyOptions): Promise<Export>;
    /** The newest exports, newest first (at most 100). */
    list(): Promise<Export[]>;
    get(exportId: number): Promise<Export>;
    /** Cancels a queued or running export and removes it and its archive. */
    delete(exportId: number): Promise<void>;
    /** Resolves with the export once it succeeded (reporting progress meanwhile); throws `ExportFailedError` when it failed. */
    wait(exportId: number, options?: WaitExportOptions): Promise<Export>;
    /** Streams the archive into `target` (never whole in memory) and ends it; resolves with the bytes written and the ETag (the archive's sha256). */
    download(exportId: number, target: DownloadTarget, options?: { signal?: AbortSignal }): Promise<{ bytes: number; etag: string | null }>;
  };
  /**
   * The generated openapi-fetch client with the same credentials, list
   * serialisation and retry: for whole envelopes and headers (`ETag`,
   * `X-RateLimit-Remaining`) or conditional requests.
   */
  raw: Client<paths>;
}

/**
 * The SDK: credentials and base address once, list parameters sent the way
 * the contract reads them (`statuses=overdue,paid`), the envelope's `data`
 * returned, and every other answer thrown as an `ApiError` (a 410 of the
 * change feed as its subclass `EventsExpiredError`). `events.follow` turns
 * the feed into an async iterable with a cursor to save; webhook deliveries
 * are checked with `verifyWebhook` (exported beside `createClient`).
 */
export function createClient(options: ClientOptions): LogiClient {
  const baseFetch = options.fetch ?? globalThis.fetch;
  const retry = options.retry === true ? {} : options.retry || null;
  const raw = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.token}`, 'X-Client-Directory': options.clientDirectory },
    // Every list parameter of this API is `style: form, explode: false`: one comma-separated value.
    querySerializer: { array: { style: 'form', explode: false } },
    fetch: retry ? retryingFetch(baseFetch, retry) : baseFetch,
  });

  return {
    raw,
    invoices: {
      list: async (query = {}) => dataOf(await raw.GET('/invoices', { params: { query } })),
      downloadPdf: async (invoiceId, query = {}) => {
        const result = await raw.GET('/invoices/{invoice_id}/pdf', { params: { path: { invoice_id: invoiceId }, query }, parseAs: 'arrayBuffer' });
        if (result.error !== undefined || result.data === undefined) throw apiErrorOf(result.response, result.error);
        return downloadedFile(result.data, result.response, `invoice-${invoiceId}.pdf`);
      },
      downloadEInvoice: async (invoiceId, query = {}) => {
        const result = await raw.GET('/invoices/{invoice_id}/e-invoice', { params: { path: { invoice_id: invoiceId }, query }, parseAs: 'arrayBuffer' });
        if (result.error !== undefined || result.data === undefined) throw apiErrorOf(result.response, result.error);
        return downloadedFile(result.data, result.response, `invoice-${invoiceId}.xml`);
      },
    },
    orders: {
      findByNr: async (nr) => dataOf(await raw.GET('/orders/by-nr', { params: { query: { nr } } })),
      fileCategories: async () => dataOf(await raw.GET('/orders/file-categories')),
      uploadFiles: async (orderId, sources, upload = {}) => {
        const files = await Promise.all(sources.map(toFile));
        return dataOf(
          await raw.POST('/orders/{order_id}/files', {
            params: {
              path: { order_id: orderId },
              header: idempotencyHeader(upload),
            },
            body: { files, category_id: upload.categoryId ?? null },
            bodySerializer: multipartForm,
          }),
        );
      },
    },
    files: {
      list: async (orderId) => dataOf(await raw.GET('/orders/{order_id}/files', { params: { path: { order_id: orderId } } })),
      download: async (orderId, fileId, download = {}) => {
        const header: Record<string, string> = {};
        if (download.range) header.Range = `bytes=${download.range.start}-${download.range.end ?? ''}`;
        if (download.range && download.ifRange) header['If-Range'] = download.ifRange;
        const result = await raw.GET('/orders/{order_id}/files/{file_id}', {
          params: { path: { order_id: orderId, file_id: fileId }, header },
          parseAs: 'stream',
        });
        if (result.error !== undefined || !result.data) throw apiErrorOf(result.response, result.error);
        return streamedFile(result.data, result.response, `file-${fileId}`);
      },
      link: async (orderId, fileId, link = {}) =>
        dataOf(
          await raw.POST('/orders/{order_id}/files/{file_id}/link', {
            params: { path: { order_id: orderId, file_id: fileId }, header: idempotencyHeader(link) },
            body: link.ttl === undefined ? {} : { ttl: link.ttl },
          }),
        ),
    },
    events: {
      list: async (query = {}) => dataOf(await raw.GET('/events', { params: { query } })),
      follow: (follow = {}) => new EventStream(async (query, signal) => dataOf(await raw.GET('/events', { params: { query }, signal })), follow),
    },
    webhooks: {
      create: async (body, options = {}) => dataOf(await raw.POST('/webhook-endpoints', { params: { header: idempotencyHeader(options) }, body })),
      list: async () => dataOf(await raw.GET('/webhook-endpoints')),
      get: async (endpointId) => dataOf(await raw.GET('/webhook-endpoints/{endpoint_id}', { params: { path: { endpoint_id: endpointId } } })),
      update: async (endpointId, changes) =>
        dataOf(await raw.PATCH('/webhook-endpoints/{endpoint_id}', { params: { path: { endpoint_id: endpointId } }, body: changes })),
      delete: async (endpointId) => {
        const result = await raw.DELETE('/webhook-endpoints/{endpoint_id}', { params: { path: { endpoint_id: endpointId } } });
        if (result.error !== undefined || !result.response.ok) throw apiErrorOf(result.response, result.error);
      },
      rotateSecret: async (endpointId) =>
        dataOf(await raw.POST('/webhook-endpoints/{endpoint_id}/rotate-secret', { params: { path: { endpoint_id: endpointId } } })),
      deliveries: async (endpointId, query = {}) =>
        dataOf(await raw.GET('/webhook-endpoints/{endpoint_id}/deliveries', { params: { path: { endpoint_id: endpointId }, query } })),
      replay: async (endpointId, body) =>
        dataOf(await raw.POST('/webhook-endpoints/{endpoint_id}/replay', { params: { path: { endpoint_id: endpointId } }, body })),
    },
    exports: {
      create: async (body = {}, options = {}) => dataOf(await raw.POST('/exports', { params: { header: idempotencyHeader(options) }, body })),
      list: async () => dataOf(await raw.GET('/exports')),
      get: async (exportId) => dataOf(await raw.GET('/exports/{export_id}', { params: { path: { export_id: exportId } } })),
      delete: async (exportId) => {
        const result = await raw.DELETE('/exports/{export_id}', { params: { path: { export_id: exportId } } });
        if (result.error !== undefined || !result.response.ok) throw apiErrorOf(result.response, result.error);
      },
      wait: async (exportId, wait = {}) => {
        for (;;) {
          const item = dataOf(await raw.GET('/exports/{export_id}', { params: { path: { export_id: exportId } }, signal: wait.signal }));
          if (item.status === 'succeeded') return item;
          if (item.status === 'failed') throw new ExportFailedError(item);
          wait.onProgress?.(item);
          await pause(wait.intervalMs ?? 1_000, wait.signal);
        }
      },
      download: async (exportId, target, download = {}) => {
        // The raw response, unread: the archive is streamed, not parsed.
        const result = await raw.GET('/exports/{export_id}/download', {
          params: { path: { export_id: exportId } },
          parseAs: 'stream',
          signal: download.signal,
        });
        // openapi-fetch reads an error's body itself (`error`); a success's body is the stream (`data`).
        if (result.error !== undefined || !result.response.ok || !result.data) throw apiErrorOf(result.response, result.error);
        const bytes = await pipeInto(result.data as ReadableStream<Uint8Array>, target);
        return { bytes, etag: result.response.headers.get('etag') };
      },
    },
  };
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => (signal?.reason instanceof Error ? signal.reason : new Error('The wait was aborted.'));
    if (signal?.aborted) return reject(aborted());
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(aborted());
      },
      { once: true },
    );
  });
}

/** Copies a response body into a WHATWG or Node.js writable, waiting for it to drain; how many bytes. */
async function pipeInto(body: ReadableStream<Uint8Array>, target: DownloadTarget): Promise<number> {
  let bytes = 0;
  if (typeof (target as WritableStream<Uint8Array>).getWriter === 'function') {
    const writer = (target as WritableStream<Uint8Array>).getWriter();
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      await writer.write(chunk);
    }
    await writer.close();
    return bytes;
  }
  const node = target as Exclude<DownloadTarget, WritableStream<Uint8Array>>;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    if (!node.write(chunk)) await new Promise<void>((resolve) => node.once('drain', resolve));
  }
  await new Promise<void>((resolve) => node.end(resolve));
  return bytes;
}

/** The envelope's `data` of a success; anything else as an ApiError. */
function dataOf<T>(result: { data?: { data: T }; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) throw apiErrorOf(result.response, result.error);
  return result.data.data;
}

/** The upload body as multipart parts: one `files` part a file (its name travels with it), `category_id` when set. */
function multipartForm(body: { files: Blob[]; category_id?: number | null }): FormData {
  const form = new FormData();
  for (const file of body.files) form.append('files', file);
  if (body.category_id !== undefined && body.category_id !== null) form.append('category_id', String(body.category_id));
  return form;
}

/** The `Idempotency-Key` header, when the caller gave a key. */
function idempotencyHeader(options: IdempotencyOptions): { 'Idempotency-Key': string } | undefined {
  return options.idempotencyKey === undefined ? undefined : { 'Idempotency-Key': options.idempotencyKey };
}
