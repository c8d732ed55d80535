import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { IncomingMessage } from 'node:http';
import { Writable, type Readable } from 'node:stream';
import type multer from '@koa/multer';
import type { ContentSnifferPort, EarlyWrite, FileStoragePort, NewFileKey, StreamedWrite } from '@logi/domain';
import type { ByteBudget } from './byte-budget.js';

export interface TempFileInfo {
  /** The temp file; empty when the bytes went to storage as they arrived (`written`). */
  path: string;
  size: number;
  sha256: string;
  contentType: string;
  index: number;
  written?: EarlyWrite;
}

/** Where each file goes while it arrives, instead of a temp file (ADR 0056). */
export interface StreamedTarget {
  storage: FileStoragePort & Required<Pick<FileStoragePort, 'beginWrite'>>;
  newKey: NewFileKey;
  /** The process's bytes held by streamed writes: a file that cannot reserve its bytes there goes to a temp file. */
  budget: ByteBudget;
  /** What one file may hold in memory at most: reserved before its first byte, released once its write is over. */
  fileBytes: number;
}

/** Files of one request whose writes may run at once, besides the one being read (each holds its bytes until its PUT). */
const WRITES_AHEAD = 2;

/**
 * A multer storage engine for one request: each file part goes to a temp file
 * under a service-made name while its bytes are counted, hashed and sniffed.
 */
export class TempFileEngine implements multer.StorageEngine {
  private nextIndex = 0;
  /** The part being read now; names the field when a size limit cuts it off. */
  currentIndex = -1;
  /** Every temp file made and every write still running, so a read cut short can remove them all before it answers. */
  private readonly paths = new Set<string>();
  private readonly writes = new Set<Promise<void>>();
  /** Set once the request's read was cut short: a part busboy still hands over is drained, not written. */
  private discarded = false;
  /** Every write to storage started (ADR 0056), and those not yet whole. */
  private readonly streamed = new Set<StreamedWrite>();
  private readonly unfinished = new Set<Promise<unknown>>();

  constructor(
    private readonly dir: string,
    private readonly sniffer: ContentSnifferPort,
    /** When set, each file goes to storage while it arrives, with no temp file. */
    private readonly target?: StreamedTarget,
  ) {}

  /** Gives its number to a `files` part that holds no file, so the files after it keep their place in part order. */
  reserveIndex(): number {
    return this.nextIndex++;
  }

  /** Waits for the writes in flight (their streams must have ended or been destroyed), then removes every temp file of this request. */
  async discardAll(): Promise<void> {
    this.discarded = true;
    await Promise.allSettled([...this.writes]);
    await Promise.all([...this.paths].map((tempPath) => rm(tempPath, { force: true })));
    await Promise.all([...this.streamed].map((write) => write.abort()));
  }

  _handleFile(_req: IncomingMessage, part: multer.File, callback: (error?: unknown, info?: multer.File) => void): void {
    const file = part as multer.File & { stream: Readable };
    if (this.discarded) {
      file.stream.resume();
      callback(new Error('The upload was already given up.'));
      return;
    }
    const index = this.nextIndex++;
    this.currentIndex = index;
    if (this.target) {
      this.writes.add(this.streamToStorage(file.stream, index, this.target, callback));
      return;
    }
    this.writes.add(this.toTempFile(file.stream, index, callback));
  }

  /** The file goes to a temp file, counted, hashed and sniffed on the way; the use case then PUTs it from there. */
  private toTempFile(stream: Readable, index: number, callback: (error?: unknown, info?: multer.File) => void): Promise<void> {
    const tempPath = path.join(this.dir, `${randomUUID()}.part`);
    this.paths.add(tempPath);
    const receipt = new FileReceipt(this.sniffer);
    stream.on('data', (chunk: Buffer) => receipt.add(chunk));
    return pipeline(stream, createWriteStream(tempPath, { flags: 'wx' }))
      .then(async () => {
        const info: TempFileInfo = { path: tempPath, size: receipt.size, sha256: receipt.sha256(), contentType: await receipt.contentType(), index };
        callback(null, info as unknown as multer.File);
      })
      .catch(async (error: unknown) => {
        await rm(tempPath, { force: true });
        callback(error);
      });
  }

  /**
   * The file's bytes go to storage as they arrive, counted, hashed and sniffed on the way; the sniff settles the
   * content type before the write commits anything. Its callback comes once the part was read; the write may still be
   * finishing (its `done`). At most WRITES_AHEAD earlier writes of the request run while a part is read. A file whose
   * bytes do not fit in the budget goes to a temp file instead; the budget is given back once the write is over,
   * whichever way (stored, failed, given up).
   */
  private async streamToStorage(
    stream: Readable,
    index: number,
    target: StreamedTarget,
    callback: (error?: unknown, info?: multer.File) => void,
  ): Promise<void> {
    while (this.unfinished.size >= WRITES_AHEAD) await Promise.race(this.unfinished);
    const release = target.budget.tryReserve(target.fileBytes);
    if (!release) return this.toTempFile(stream, index, callback);
    const { id, storageKey } = target.newKey();
    const receipt = new FileReceipt(this.sniffer);
    let settleType: (type: Promise<string>) => void = () => undefined;
    let failType: (error: unknown) => void = () => undefined;
    const contentType = new Promise<string>((resolve, reject) => {
      settleType = resolve;
      failType = reject;
    });
    let write: StreamedWrite;
    try {
      write = target.storage.beginWrite(storageKey, contentType);
    } catch (error) {
      release();
      stream.resume();
      callback(error);
      return;
    }
    this.streamed.add(write);
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, next) => {
        // The content type is settled as soon as the head is whole: a multipart upload may start before the end.
        if (receipt.add(chunk)) settleType(receipt.contentType());
        write.write(chunk).then(() => next(), next);
      },
    });
    try {
      await pipeline(stream, sink);
      const type = receipt.contentType();
      settleType(type);
      const info: TempFileInfo = { path: '', size: receipt.size, sha256: receipt.sha256(), contentType: await type, index };
      const done = write.end({ size: info.size, sha256: info.sha256, contentType: info.contentType });
      // The bytes are let go once the PUT is over (a write that fails aborts itself).
      const settled = done.catch(() => undefined).finally(release);
      this.unfinished.add(settled);
      void settled.then(() => this.unfinished.delete(settled));
      info.written = { id, storageKey, done, discard: () => write.abort() };
      callback(null, info as unknown as multer.File);
    } catch (error) {
      // Settles it if the head never came; a sniff already under way keeps its answer.
      failType(error);
      await write.abort();
      release();
      callback(error);
    }
  }

  _removeFile(_req: IncomingMessage, file: multer.File, callback: (error: Error) => void): void {
    const written = (file as unknown as TempFileInfo).written;
    const removed = written ? written.discard() : file.path ? rm(file.path, { force: true }) : Promise.resolve();
    removed.then(
      () => callback(null as unknown as Error),
      (error: Error) => callback(error),
    );
  }
}

/** What a file's bytes tell on their way in: how many, their SHA-256, and their head, which the sniffer reads. */
class FileReceipt {
  size = 0;
  private readonly hash = createHash('sha256');
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private sniffed: Promise<string> | null = null;

  constructor(private readonly sniffer: ContentSnifferPort) {}

  /** Counts the next chunk; true for the chunk that makes the head whole. */
  add(chunk: Buffer): boolean {
    this.hash.update(chunk);
    this.size += chunk.length;
    if (this.headBytes >= this.sniffer.headBytes) return false;
    this.head.push(chunk);
    this.headBytes += chunk.length;
    return this.headBytes >= this.sniffer.headBytes;
  }

  /** The content type, sniffed once from the head (as much of it as came). */
  contentType(): Promise<string> {
    return (this.sniffed ??= this.sniffer.contentTypeOf(Buffer.concat(this.head).subarray(0, this.sniffer.headBytes)));
  }

  /** The SHA-256 (hex) of every byte; once the last came. */
  sha256(): string {
    return this.hash.digest('hex');
  }
}
