import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import type { ArchiveBuilder, ArchiveMember, ExportArchivePort, FinishedArchive } from '@logi/domain';

/** A staged archive's name: `export-<id>-<attempt>-<uuid>.zip`. */
const STAGED = /^export-(\d+)-(\d+)-[0-9a-f-]+\.zip$/;
/** Staged files of no known attempt (an older name) are removed after this long. */
const UNKNOWN_STAGED_MAX_AGE_MS = 3_600_000;

/** Members stored as they are: PDFs are compressed inside already, deflating them again costs CPU for nothing. */
const STORED = /\.pdf$/i;

/**
 * ZIP archives written with yazl straight into a temporary file under `tmpDir`: each member is handed to yazl as a
 * stream, and `add` resolves once yazl has read it, so at most one member is held in memory whatever the archive's
 * size. The archive's size and SHA-256 are counted on the way to the file (docs/contribute/decisions/0041-exports.md).
 */
export class YazlExportArchive implements ExportArchivePort {
  constructor(private readonly tmpDir: string) {}

  async create(owner: { exportId: number; attempt: number }): Promise<ArchiveBuilder> {
    await mkdir(this.tmpDir, { recursive: true });
    return new YazlArchiveBuilder(path.join(this.tmpDir, `export-${owner.exportId}-${owner.attempt}-${randomUUID()}.zip`));
  }

  async sweep(isRunning: (exportId: number, attempt: number) => Promise<boolean>): Promise<number> {
    const names = (await readdir(this.tmpDir).catch(() => [] as string[])).filter((name) => name.startsWith('export-') && name.endsWith('.zip'));
    let removed = 0;
    for (const name of names) {
      const file = path.join(this.tmpDir, name);
      const owner = STAGED.exec(name);
      const stale = owner
        ? !(await isRunning(Number(owner[1]), Number(owner[2])))
        : ((await stat(file).catch(() => null))?.mtimeMs ?? Date.now()) < Date.now() - UNKNOWN_STAGED_MAX_AGE_MS;
      if (!stale) continue;
      await rm(file, { force: true });
      removed += 1;
    }
    return removed;
  }
}

class YazlArchiveBuilder implements ArchiveBuilder {
  private readonly zip = new yazl.ZipFile();
  private readonly hash = createHash('sha256');
  private size = 0;
  private readonly written: Promise<void>;
  private failure: Error | null = null;
  private ended = false;

  constructor(private readonly localPath: string) {
    const count = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        this.hash.update(chunk);
        this.size += chunk.length;
        callback(null, chunk);
      },
    });
    this.written = pipeline(this.zip.outputStream, count, createWriteStream(localPath));
    this.written.catch((error: unknown) => {
      this.failure = error instanceof Error ? error : new Error(String(error));
    });
  }

  async add(memberPath: string, data: Buffer | string): Promise<ArchiveMember> {
    if (this.failure) throw this.failure;
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    // yazl keeps every entry, with the stream it was given, until the archive ends: a stream that lets go of its bytes
    // once read, so a member's Buffer (a PDF) is released as soon as it is in the ZIP, not at the end of the export.
    let pending: Buffer | null = bytes;
    const source = new Readable({
      read() {
        const chunk = pending;
        pending = null;
        this.push(chunk);
        if (chunk) this.push(null);
      },
    });
    const consumed = new Promise<void>((resolve, reject) => {
      source.once('end', resolve);
      source.once('error', reject);
      // The file failing ends the archive: yazl would never read this member.
      this.written.catch(reject);
    });
    this.zip.addReadStream(source, memberPath, { compress: !STORED.test(memberPath), size: bytes.length });
    await consumed;
    return { path: memberPath, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  }

  async finish(): Promise<FinishedArchive> {
    this.ended = true;
    this.zip.end();
    await this.written;
    return { localPath: this.localPath, size: this.size, sha256: this.hash.digest('hex') };
  }

  async discard(): Promise<void> {
    // An archive left half-written: its stream closed, so the file is released before it is removed.
    if (!this.ended) {
      this.ended = true;
      (this.zip.outputStream as Readable).destroy();
      await this.written.catch(() => undefined);
    }
    await rm(this.localPath, { force: true });
  }
}
