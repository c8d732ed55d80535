import { createHash } from 'node:crypto';
import { finished } from 'node:stream/promises';
import type { Client } from 'minio';
import type { StreamedWrite, StreamedWriteEnd } from '@logi/domain';

/** S3's smallest part (all but the last): the part size of a multipart write. */
export const MULTIPART_PART_BYTES = 5 * 1024 * 1024;
/**
 * Up to this many bytes (an upload's largest file) an object goes in one PUT once its last byte is in; only a larger
 * one becomes a multipart upload. Measured on s3rver (ADR 0056), 10 MiB as two parts cost more than one PUT after the
 * read: completing rewrites the object there, and each part is hashed again for its signature.
 */
export const SINGLE_PUT_MAX_BYTES = 10 * 1024 * 1024;

/** What a streamed write needs of MinioFileStorage: the client, the bucket, and its error handling around each request. */
export interface StreamedWriteTarget {
  client: Client;
  bucket: string;
  key: string;
  /** Runs one request in the bucket (made first if need be), with the storage's readable errors. */
  run<T>(operation: () => Promise<T>): Promise<T>;
  /** Removes the object (a missing one is fine). */
  remove(): Promise<void>;
}

/**
 * An object written while its bytes arrive (ADR 0056). Up to SINGLE_PUT_MAX_BYTES it is one PUT once the last byte is
 * in (held in memory until then), signed with the SHA-256 of the receipt and carrying it as `x-amz-checksum-sha256` (as putFile). Beyond that, an
 * S3 multipart upload of MULTIPART_PART_BYTES parts: each full part goes out while the next one arrives (at most one
 * part in flight), the last part and the completion once the last byte is in. The multipart upload is started
 * only after the content type was sniffed; any failure aborts it.
 */
export class MinioStreamedWrite implements StreamedWrite {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private uploadId: Promise<string> | null = null;
  /** The part being sent now, if any; parts go one after the other. */
  private inFlight: Promise<void> = Promise.resolve();
  private readonly etags: Array<{ part: number; etag: string }> = [];
  /** Every byte handed to `write`: what the object will hold. */
  private received = 0;
  private failure: Error | null = null;
  /** Settles once the write has ended one way or the other (end's outcome), for abort. */
  private ended: Promise<unknown> | null = null;
  private aborted = false;

  constructor(
    private readonly target: StreamedWriteTarget,
    private readonly contentType: Promise<string>,
  ) {
    // Nobody may await the sniff before end(); its failure surfaces there.
    contentType.catch(() => undefined);
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.aborted) throw new Error('The write was given up.');
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.received += chunk.length;
    // Strictly more: an object of exactly SINGLE_PUT_MAX_BYTES still goes in one PUT.
    if (this.uploadId === null && this.buffered <= SINGLE_PUT_MAX_BYTES) return;
    while (this.buffered > MULTIPART_PART_BYTES) {
      const all = Buffer.concat(this.chunks);
      const part = all.subarray(0, MULTIPART_PART_BYTES);
      const rest = all.subarray(MULTIPART_PART_BYTES);
      this.chunks = [rest];
      this.buffered = rest.length;
      // One part in flight: the caller waits for the one before (back-pressure), and this one goes out behind it.
      await this.inFlight;
      this.throwIfFailed();
      this.inFlight = this.sendPart(part).catch((error: unknown) => {
        this.failure ??= error instanceof Error ? error : new Error('A part could not be stored.');
      });
    }
  }

  end(info: StreamedWriteEnd): Promise<void> {
    const ended = this.finish(info);
    this.ended = ended.catch((error: unknown) => error);
    return ended;
  }

  private async finish(info: StreamedWriteEnd): Promise<void> {
    if (this.aborted) throw new Error('The write was given up.');
    // The store job commits the file's row without looking at the object again (ADR 0046, amended): the object holds
    // the file's size, or nothing is stored. One PUT carries the receipt's SHA-256, which S3 checks; a multipart
    // upload's parts are checked one by one, so their sum is checked here.
    if (this.received !== info.size) {
      await this.inFlight;
      await this.abortUpload();
      throw new Error(`The file's ${info.size} bytes arrived as ${this.received}; nothing was stored.`);
    }
    const rest = Buffer.concat(this.chunks);
    this.chunks = [];
    if (this.uploadId === null) {
      await this.putWhole(rest, info);
      return;
    }
    try {
      await this.inFlight;
      this.throwIfFailed();
      if (rest.length > 0) await this.sendPart(rest);
      const uploadId = await this.uploadId;
      await this.target.run(() => this.target.client.completeMultipartUpload(this.target.bucket, this.target.key, uploadId, this.etags));
    } catch (error) {
      await this.abortUpload();
      throw error;
    }
  }

  async abort(): Promise<void> {
    this.aborted = true;
    // Let the requests in flight settle first: a part or a PUT still running could otherwise land after the clean-up.
    await this.inFlight;
    if (this.ended) {
      const outcome = await this.ended;
      // end() failed: it cleaned up after itself.
      if (outcome !== undefined) return;
      await this.target.remove().catch(() => undefined);
      return;
    }
    await this.abortUpload();
  }

  /** A part that failed fails every later call. */
  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  /** One PUT of the whole object, as putFile: signed with the receipt's SHA-256 and carrying it for S3 to check. */
  private async putWhole(bytes: Buffer, info: StreamedWriteEnd): Promise<void> {
    const { client, bucket, key } = this.target;
    await this.target.run(async () => {
      const response = await client.makeRequestStreamAsync(
        {
          method: 'PUT',
          bucketName: bucket,
          objectName: key,
          headers: {
            'Content-Type': info.contentType,
            'Content-Length': bytes.length,
            'x-amz-checksum-sha256': Buffer.from(info.sha256, 'hex').toString('base64'),
          },
        },
        bytes,
        client.enableSHA256 ? info.sha256 : '',
        [200],
        '',
      );
      response.resume();
      await finished(response);
    });
  }

  /** Sends the next part, starting the multipart upload first (once the content type is known). */
  private async sendPart(bytes: Buffer): Promise<void> {
    const { client, bucket, key } = this.target;
    this.uploadId ??= this.contentType.then((contentType) =>
      this.target.run(() => client.initiateNewMultipartUpload(bucket, key, { 'Content-Type': contentType })),
    );
    const uploadId = await this.uploadId;
    const part = this.etags.length + 1;
    // Over plain HTTP each part is signed with its own SHA-256, which S3 checks; over HTTPS (UNSIGNED-PAYLOAD) it carries its MD5 instead.
    const signed = client.enableSHA256;
    const response = await this.target.run(() =>
      client.makeRequestStreamAsync(
        {
          method: 'PUT',
          bucketName: bucket,
          objectName: key,
          query: `partNumber=${part}&uploadId=${encodeURIComponent(uploadId)}`,
          headers: { 'Content-Length': bytes.length, ...(signed ? {} : { 'Content-MD5': createHash('md5').update(bytes).digest('base64') }) },
        },
        bytes,
        signed ? createHash('sha256').update(bytes).digest('hex') : '',
        [200],
        '',
      ),
    );
    response.resume();
    await finished(response);
    const etag = String(response.headers.etag ?? '').replace(/^"|"$/g, '');
    this.etags.push({ part, etag });
  }

  /** Aborts the multipart upload, if one was started; a failure is left to the server's own clean-up rules. */
  private async abortUpload(): Promise<void> {
    if (this.uploadId === null) return;
    const uploadId = await this.uploadId.catch(() => null);
    if (uploadId === null) return;
    await this.target.run(() => this.target.client.abortMultipartUpload(this.target.bucket, this.target.key, uploadId)).catch(() => undefined);
  }
}
