import { isApiKeyActive } from '../../clients/api-key.js';
import type { ApiKeyRepositoryPort } from '../../ports/api-key-repository.port.js';
import type { ClockPort } from '../../ports/clock.port.js';
import type { FileLinkSignerPort } from '../../ports/file-link-signer.port.js';
import type { ByteRange, FileStoragePort } from '../../ports/file-storage.port.js';
import type { OrderFileRepositoryPort } from '../../ports/order-file-repository.port.js';
import type { OrderRepositoryPort } from '../../ports/order-repository.port.js';
import type { OrderFile } from '../order.js';
import { OrderNotFoundError } from '../orders.errors.js';
import { parseCreateFileLink } from './order-file-link.input.js';
import { FileLinkExpiredError, FileLinkInvalidError, FileLinkRevokedError, OrderFileNotFoundError } from './order-files.errors.js';

/** A stored file ready to be sent: its row and a way to stream its bytes (all, or one range). */
export interface OrderFileDownload {
  file: OrderFile;
  open(range?: ByteRange): Promise<NodeJS.ReadableStream>;
}

/** A link to a file: a URL the storage presigned, or a token for the API's own link route. */
export type OrderFileLink = { kind: 'presigned'; url: string; expires: number } | { kind: 'token'; token: string; expires: number };

/**
 * Files out of an order (see ADR 0040): the list, a download streamed from
 * storage, and links that work without credentials until they expire. Every
 * call is scoped to the client directory; another directory's order or file
 * is missing (404).
 */
export class OrderFilesUseCase {
  constructor(
    private readonly deps: {
      orders: OrderRepositoryPort;
      files: OrderFileRepositoryPort;
      storage: FileStoragePort;
      signer: FileLinkSignerPort;
      /** Read on every link served: a token link ends when the key that made it is revoked or expires. */
      keys: Pick<ApiKeyRepositoryPort, 'findById'>;
      clock: ClockPort;
      /** Gives a download its `Content-Disposition` (the API's builder), so a presigned link names the file as the API does. */
      disposition: (name: string) => string;
    },
  ) {}

  /** The order's files, oldest first. */
  async list(directory: string, orderId: number): Promise<OrderFile[]> {
    await this.order(directory, orderId);
    return this.deps.files.listByOrder(directory, orderId);
  }

  async download(directory: string, orderId: number, fileId: number): Promise<OrderFileDownload> {
    return this.downloadOf(await this.file(directory, orderId, fileId));
  }

  /** 404 (`Order not found`, then `File not found`) unless the file is on the caller's order: what precedes a 422. */
  async assertFile(directory: string, orderId: number, fileId: number): Promise<void> {
    await this.file(directory, orderId, fileId);
  }

  /**
   * A presigned storage URL when the storage has them (it lives its ttl), else
   * a signed token for the API's link route, bound to the API key `keyId` that
   * asked for it: it stops working when that key is revoked or expires.
   */
  async link(directory: string, orderId: number, fileId: number, body: unknown, keyId: number): Promise<OrderFileLink> {
    const file = await this.file(directory, orderId, fileId);
    const { ttlSeconds } = parseCreateFileLink(body);
    const expires = this.nowSeconds() + ttlSeconds;
    const url = await this.deps.storage.presignGet(file.storageKey, {
      ttlSeconds,
      contentDisposition: this.deps.disposition(file.name),
      contentType: file.contentType,
    });
    if (url !== null) return { kind: 'presigned', url, expires };
    return { kind: 'token', token: this.deps.signer.sign({ fileId: file.id, directory, expires, keyId }), expires };
  }

  /** The file a token grants, while it and the key that made it are valid; a file deleted since answers 404. */
  async openLink(token: string): Promise<OrderFileDownload> {
    const claims = this.deps.signer.verify(token);
    if (!claims) throw new FileLinkInvalidError();
    const now = this.nowSeconds();
    if (now >= claims.expires) throw new FileLinkExpiredError();
    const key = await this.deps.keys.findById(claims.directory, claims.keyId);
    if (!key || !isApiKeyActive(key, now)) throw new FileLinkRevokedError();
    const file = await this.deps.files.findById(claims.directory, claims.fileId);
    if (!file) throw new OrderFileNotFoundError();
    return this.downloadOf(file);
  }

  private downloadOf(file: OrderFile): OrderFileDownload {
    return { file, open: (range) => this.deps.storage.getStream(file.storageKey, range) };
  }

  private async order(directory: string, orderId: number): Promise<void> {
    if (!(await this.deps.orders.findById(directory, orderId))) throw new OrderNotFoundError();
  }

  /** The order is checked first, so a missing order is `Order not found` whatever the file id. */
  private async file(directory: string, orderId: number, fileId: number): Promise<OrderFile> {
    await this.order(directory, orderId);
    const file = await this.deps.files.findById(directory, fileId);
    if (!file || file.orderId !== orderId) throw new OrderFileNotFoundError();
    return file;
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.now().getTime() / 1000);
  }
}
