import { createReadStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import http from 'node:http';
import https from 'node:https';
import type { Client } from 'minio';
import {
  StoredObjectMissingError,
  type ByteRange,
  type FileStoragePort,
  type PresignOptions,
  type StoragePage,
  type StoredObjectPage,
  type StreamedWrite,
} from '@logi/domain';
import { lazyModule } from '../shared/lazy-module.js';
import { assertValidStorageKey, isValidStorageKey } from '../shared/storage-key.js';
import { MinioStreamedWrite } from './minio-streamed.write.js';

const minio = lazyModule<typeof import('minio')>('minio');

export interface MinioFileStorageOptions {
  /** `http(s)://host[:port]`; the path, if any, is ignored (S3 addresses buckets itself). */
  endPoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region?: string;
  /**
   * A request that makes no progress (connect, send or receive) for this long
   * is aborted: a dead or black-holed S3 answers with an error, never a hang.
   */
  requestTimeoutMs?: number;
  /** The address clients reach S3 at, when not `endPoint`: presigned links are signed for it (no request is made to it). */
  publicEndPoint?: string | null;
}

/** The most keys one ListObjects request answers. */
const S3_MAX_KEYS = 1_000;
/** The minio client's smallest part size: up to it, putObject would hold the whole body in memory for one PUT. */
const STREAMED_PUT_MAX_BYTES = 64 * 1024 * 1024;

/** The bucket itself is gone. */
const NO_SUCH_BUCKET = 'NoSuchBucket';

/** S3 error codes that mean "no such object" (HEAD answers carry no body, hence NotFound). */
const MISSING = new Set(['NoSuchKey', 'NotFound', 'NoSuchObject']);

/**
 * Objects in one S3 bucket, path-style as MinIO expects. The bucket is
 * created on first use (or by init() at start). A put from a local file or a
 * buffer is a single PUT with its size known (above 64 MiB the minio client's
 * multipart upload); an upload written while it arrives (beginWrite) is one
 * PUT up to 10 MiB (SINGLE_PUT_MAX_BYTES) and a multipart upload of 5 MiB parts above (ADR 0056).
 */
export class MinioFileStorage implements FileStoragePort {
  private readonly client: Client;
  /** Signs presigned links for the address clients use; `client` itself when that is `endPoint`. */
  private readonly presigner: Client;
  private readonly bucket: string;
  private readonly region: string;
  private bucketReady: Promise<void> | null = null;

  constructor(options: MinioFileStorageOptions) {
    this.bucket = options.bucket;
    this.region = options.region ?? 'us-east-1';
    this.client = this.clientFor(options.endPoint, options);
    this.presigner = options.publicEndPoint ? this.clientFor(options.publicEndPoint, options) : this.client;
  }

  private clientFor(endPoint: string, options: MinioFileStorageOptions): Client {
    const url = new URL(endPoint);
    const useSSL = url.protocol === 'https:';
    const timeoutMs = options.requestTimeoutMs ?? 5_000;
    return new (minio().Client)({
      endPoint: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port ? Number(url.port) : useSSL ? 443 : 80,
      useSSL,
      pathStyle: true,
      // Known here, so presigning needs no request to ask S3 for the bucket's region.
      region: this.region,
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      transport: timedTransport(useSSL ? https : http, timeoutMs),
      transportAgent: new (useSSL ? https.Agent : http.Agent)({ keepAlive: true, timeout: timeoutMs }),
      // Retries belong to the caller (the job queue retries); here they only stretch a failure.
      retryOptions: { disableRetry: true },
    });
  }

  /** Creates the bucket when it is missing. Safe to call again and from several processes. */
  async init(): Promise<void> {
    await this.guard(async () => {
      if (await this.client.bucketExists(this.bucket)) return;
      try {
        await this.client.makeBucket(this.bucket, this.region);
      } catch (error) {
        // Another process made it between our check and our create.
        if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(codeOf(error) ?? '')) throw error;
      }
    });
  }

  /**
   * With the bytes' SHA-256 (hex) and at most STREAMED_PUT_MAX_BYTES: one PUT streamed from the file, signed with that
   * hash and carrying it as `x-amz-checksum-sha256`, so the server checks the bytes it got against the ones hashed on
   * receipt. The minio client's putObject would read the whole file into memory and hash it again first (issue 26).
   * Otherwise putObject: one PUT up to its part size, a multipart upload above.
   */
  async putFile(key: string, localPath: string, size: number, contentType: string, sha256?: string): Promise<void> {
    assertValidStorageKey(key);
    // The stream is made inside, so a retry after a lost bucket reads the file from the start.
    if (sha256 === undefined || size > STREAMED_PUT_MAX_BYTES) {
      await this.inBucket(() => this.client.putObject(this.bucket, key, createReadStream(localPath), size, { 'Content-Type': contentType }));
      return;
    }
    await this.inBucket(async () => {
      const response = await this.client.makeRequestStreamAsync(
        {
          method: 'PUT',
          bucketName: this.bucket,
          objectName: key,
          headers: { 'Content-Type': contentType, 'Content-Length': size, 'x-amz-checksum-sha256': Buffer.from(sha256, 'hex').toString('base64') },
        },
        createReadStream(localPath),
        // Over plain HTTP the payload's hash is signed (the minio client asks for it); over HTTPS it signs UNSIGNED-PAYLOAD.
        this.client.enableSHA256 ? sha256 : '',
        [200],
        '',
      );
      response.resume();
      await finished(response);
    });
  }

  /** See MinioStreamedWrite: one PUT up to 10 MiB, a multipart upload whose parts go out as they arrive above. */
  beginWrite(key: string, contentType: Promise<string>): StreamedWrite {
    assertValidStorageKey(key);
    return new MinioStreamedWrite(
      {
        client: this.client,
        bucket: this.bucket,
        key,
        run: (operation) => this.inBucket(operation),
        remove: () => this.delete(key),
      },
      contentType,
    );
  }

  async putBuffer(key: string, data: Buffer, contentType: string): Promise<void> {
    assertValidStorageKey(key);
    await this.inBucket(() => this.client.putObject(this.bucket, key, data, data.length, { 'Content-Type': contentType }));
  }

  async getBuffer(key: string): Promise<Buffer> {
    assertValidStorageKey(key);
    return this.inBucket(async () => {
      const stream = await this.client.getObject(this.bucket, key);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    }, key);
  }

  /** A server-side copy: the bytes never pass through this process. */
  async copy(fromKey: string, toKey: string): Promise<void> {
    assertValidStorageKey(fromKey);
    assertValidStorageKey(toKey);
    await this.inBucket(
      () =>
        this.client.copyObject(
          new (minio().CopySourceOptions)({ Bucket: this.bucket, Object: fromKey }),
          new (minio().CopyDestinationOptions)({ Bucket: this.bucket, Object: toKey }),
        ),
      fromKey,
    );
  }

  async delete(key: string): Promise<void> {
    assertValidStorageKey(key);
    try {
      await this.inBucket(() => this.client.removeObject(this.bucket, key), key);
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    assertValidStorageKey(key);
    try {
      await this.inBucket(() => this.client.statObject(this.bucket, key), key);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async stat(key: string): Promise<{ size: number }> {
    assertValidStorageKey(key);
    const info = await this.inBucket(() => this.client.statObject(this.bucket, key), key);
    return { size: info.size };
  }

  /** One GET (with a `Range` header for a range); the promise resolves once S3 has answered with the object. */
  async getStream(key: string, range?: ByteRange): Promise<NodeJS.ReadableStream> {
    assertValidStorageKey(key);
    return this.inBucket(
      () => (range ? this.client.getPartialObject(this.bucket, key, range.start, range.end - range.start + 1) : this.client.getObject(this.bucket, key)),
      key,
    );
  }

  /**
   * A presigned GET (signature V4, computed here without a request: the
   * region is known). The link answers with the given Content-Disposition and
   * Content-Type (S3's `response-content-*` overrides).
   */
  async presignGet(key: string, options: PresignOptions): Promise<string | null> {
    assertValidStorageKey(key);
    return this.guard(() =>
      this.presigner.presignedGetObject(this.bucket, key, options.ttlSeconds, {
        'response-content-disposition': options.contentDisposition,
        'response-content-type': options.contentType,
      }),
    );
  }

  /** Answers only when S3 answers and the bucket is there (it is made if missing). */
  async deleteStale(prefix: string, olderThan: Date, limit: number): Promise<number> {
    return this.inBucket(async () => {
      const stale: string[] = [];
      for await (const item of this.client.listObjectsV2(this.bucket, prefix, true)) {
        const { name, lastModified } = item as { name?: string; lastModified?: Date };
        if (name && lastModified && lastModified < olderThan) stale.push(name);
        if (stale.length >= limit) break;
      }
      // One DELETE each: the batch call is not spoken by every S3 server, and sweeps are small.
      for (const name of stale) await this.client.removeObject(this.bucket, name);
      return stale.length;
    });
  }

  /**
   * One ListObjectsV2 request of at most `limit` keys (S3 answers 1,000 at
   * most), from `start-after` the marker. The marker is the last key of the
   * page, a plain key rather than S3's continuation token: it stays valid
   * between runs, across processes and server restarts, and means the same
   * on every S3 server. S3 lists in key order, so a walk misses no object
   * that existed throughout it.
   */
  async listOlderThan(prefix: string, olderThan: Date, page: { limit: number; after: string | null }): Promise<StoragePage> {
    const { objects, next } = await this.listObjects(prefix, page);
    return { keys: objects.filter((object) => object.writtenAt < olderThan).map((object) => object.key), next };
  }

  /** The listing of listOlderThan, with each object's LastModified. */
  async listObjects(prefix: string, page: { limit: number; after: string | null }): Promise<StoredObjectPage> {
    const maxKeys = Math.max(1, Math.min(S3_MAX_KEYS, Math.floor(page.limit)));
    const after = page.after !== null && page.after.startsWith(prefix) ? page.after : '';
    return this.inBucket(async () => {
      const listed = await this.client.listObjectsV2Query(this.bucket, prefix, '', '', maxKeys, after);
      const items = listed.objects as Array<{ name?: string; lastModified?: Date }>;
      const objects = items
        .filter((item) => item.name !== undefined && isValidStorageKey(item.name) && item.lastModified instanceof Date)
        .map((item) => ({ key: item.name!, writtenAt: item.lastModified! }));
      const last = items.at(-1)?.name;
      // The XML parser may hand `IsTruncated` over as a boolean or as its text.
      const truncated = (listed.isTruncated as unknown) === true || String(listed.isTruncated) === 'true';
      return { objects, next: truncated && last ? last : null };
    });
  }

  async ping(): Promise<void> {
    await this.init();
    this.bucketReady = Promise.resolve();
  }

  /** One bucket check per process; a failed one is tried again on the next call. */
  private ensureBucket(): Promise<void> {
    if (!this.bucketReady) {
      this.bucketReady = this.init().catch((error: unknown) => {
        this.bucketReady = null;
        throw error;
      });
    }
    return this.bucketReady;
  }

  /**
   * Runs `operation` in the bucket, made first if need be. A bucket that went
   * away after it was checked (deleted by hand, a wiped MinIO) answers
   * NoSuchBucket: the check is forgotten, the bucket made again and the
   * operation tried once more, instead of failing until a readiness probe runs.
   */
  private async inBucket<T>(operation: () => Promise<T>, key?: string): Promise<T> {
    const ready = this.ensureBucket();
    await ready;
    return this.guard(async () => {
      try {
        return await operation();
      } catch (error) {
        if (codeOf(error) !== NO_SUCH_BUCKET) throw error;
        // Callers failing together share one re-creation: only the first resets the check.
        if (this.bucketReady === ready) this.bucketReady = null;
        await this.ensureBucket();
        return operation();
      }
    }, key);
  }

  /** Turns the client's errors into messages fit for a client: no host, no keys, no stack. */
  private async guard<T>(operation: () => Promise<T>, key?: string): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw storageError(error, key);
    }
  }
}

/**
 * http(s).request with an inactivity timeout that destroys the request, so minio's promise settles. Until the answer's
 * head arrives it is the socket's own (connect, send, wait). Once the body flows it counts only time spent waiting on
 * S3: a download's reader that stops reading (a slow client of the API, back-pressure) leaves a full buffer and the
 * socket idle, which is not S3's silence; a body cut after `timeoutMs` of that was issue 35.
 * A dead S3 connection is still found: no byte for `timeoutMs` to 2 × `timeoutMs` while the reader waits ends it.
 */
function timedTransport(base: typeof http | typeof https, timeoutMs: number): Pick<typeof http, 'request'> {
  const request = (options: http.RequestOptions, callback?: (res: http.IncomingMessage) => void): http.ClientRequest => {
    // `timeout` here also covers the connect phase, which req.setTimeout does not.
    const req = base.request({ ...options, timeout: timeoutMs }, callback);
    const timedOut = () => Object.assign(new Error(`request timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
    req.on('timeout', () => req.destroy(timedOut()));
    req.on('response', (res) => {
      req.setTimeout(0);
      watchBody(req, res, timeoutMs, () => req.destroy(timedOut()));
    });
    return req;
  };
  return { request: request as unknown as typeof http.request };
}

/** Calls `stalled` when no byte came for a whole period while the body's reader was waiting for one. */
function watchBody(req: http.ClientRequest, res: http.IncomingMessage, periodMs: number, stalled: () => void): void {
  // Progress is read from the socket's counter: a 'data' listener would switch the body to flowing mode.
  let seen = req.socket?.bytesRead ?? 0;
  const timer = setInterval(() => {
    const read = req.socket?.bytesRead ?? seen;
    const progressed = read !== seen;
    seen = read;
    if (progressed || res.complete) return;
    // A full buffer is the reader's: Node stops reading the socket until the reader takes bytes, so S3 owes nothing.
    if (res.readableLength >= res.readableHighWaterMark) return;
    stalled();
  }, periodMs);
  timer.unref();
  const stop = () => clearInterval(timer);
  res.once('end', stop);
  res.once('close', stop);
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isMissing(error: unknown): boolean {
  return error instanceof Error && error.name === STORAGE_ERROR && (error as { missing?: boolean }).missing === true;
}

const STORAGE_ERROR = 'StorageError';

function storageError(error: unknown, key?: string): Error {
  if (error instanceof Error && error.name === STORAGE_ERROR) return error;
  const code = codeOf(error);
  const missing = code !== undefined && MISSING.has(code);
  let message: string;
  if (missing && key !== undefined) return new StoredObjectMissingError(key, { cause: error });
  if (code && /^E[A-Z]+$/.test(code)) {
    // Node's network errors: `connect ECONNREFUSED 10.0.0.5:9000` becomes `connect ECONNREFUSED`.
    const syscall = (error as { syscall?: unknown }).syscall;
    message = `Storage unavailable: ${typeof syscall === 'string' ? `${syscall} ` : ''}${code}`;
  } else if (code) message = `Storage unavailable: S3 error ${code}`;
  else message = 'Storage unavailable: unexpected error';
  const result = Object.assign(new Error(message, { cause: error }), { missing });
  result.name = STORAGE_ERROR;
  // Network codes stay readable by the edge, which answers them with 503.
  if (code && /^E[A-Z]+$/.test(code)) Object.assign(result, { code });
  return result;
}
