import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type multer from '@koa/multer';
import type { ContentSnifferPort } from '@logi/domain';

export interface TempFileInfo {
  path: string;
  size: number;
  sha256: string;
  contentType: string;
  index: number;
}

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

  constructor(
    private readonly dir: string,
    private readonly sniffer: ContentSnifferPort,
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
    const tempPath = path.join(this.dir, `${randomUUID()}.part`);
    this.paths.add(tempPath);
    const hash = createHash('sha256');
    const head: Buffer[] = [];
    let headBytes = 0;
    let size = 0;
    file.stream.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
      if (headBytes < this.sniffer.headBytes) {
        head.push(chunk);
        headBytes += chunk.length;
      }
    });
    const write = pipeline(file.stream, createWriteStream(tempPath, { flags: 'wx' }))
      .then(async () => {
        const contentType = await this.sniffer.contentTypeOf(Buffer.concat(head).subarray(0, this.sniffer.headBytes));
        const info: TempFileInfo = { path: tempPath, size, sha256: hash.digest('hex'), contentType, index };
        callback(null, info as unknown as multer.File);
      })
      .catch(async (error: unknown) => {
        await rm(tempPath, { force: true });
        callback(error);
      });
    this.writes.add(write);
  }

  _removeFile(_req: IncomingMessage, file: multer.File, callback: (error: Error) => void): void {
    rm(file.path, { force: true }).then(
      () => callback(null as unknown as Error),
      (error: Error) => callback(error),
    );
  }
}
