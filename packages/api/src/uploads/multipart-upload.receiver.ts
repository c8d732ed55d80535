import { mkdir, rm } from 'node:fs/promises';
import type { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import type { Context } from 'koa';
import multer from '@koa/multer';
import {
  baseFileName,
  MAX_FILE_BYTES,
  Messages,
  ValidationError,
  type ContentSnifferPort,
  type FileStoragePort,
  type NewFileKey,
  type ReceivedUpload,
} from '@logi/domain';
import { HttpError } from '../http/http-error.js';
import { TempFileEngine, type TempFileInfo } from './temp-file.engine.js';
import { streamedWritesBudget, type ByteBudget } from './byte-budget.js';

const FILE_FIELDS = new Set(['files', 'files[]']);

export interface ReceiverOptions {
  tmpDir: string;
  maxFiles: number;
  /** Tells each file's content type from its head, as it is written. */
  sniffer: ContentSnifferPort;
  /** With a storage that can write while bytes arrive (S3), each file goes there as it is read, not to a temp file (ADR 0056). */
  storage?: FileStoragePort;
  /** Bytes streamed writes may hold in memory; the process's own budget unless a test hands its own. */
  streamedWrites?: ByteBudget;
}

/** Body too large: raised by the byte counter, answered 413. */
class BodyTooLargeError extends Error {}

/** A limit we check ourselves, carrying the code multer would use, so one mapping explains both. */
const limitError = (code: string, field?: string) => Object.assign(new Error(code), { code, field });

/** busboy as multer hands it to `streamHandler`: a writable that reports parts. */
type Busboy = Writable & EventEmitter;

/** What one request's read has seen so far. */
interface ReadState {
  engine: TempFileEngine;
  busboy: Busboy | null;
  /** `files` parts handed to the engine. */
  accepted: number;
  /** Numbers of `files` parts that came as plain fields, not files. */
  notFiles: number[];
  categoryAsFile: boolean;
  /** Settles the read as soon as its answer is known, without waiting for the rest of the body. */
  decide: (reason: unknown) => void;
  decided: Promise<never>;
}

/**
 * Reads a multipart upload into temp files. Limits are enforced while
 * reading: a file over 10 MiB or one file too many stops the read (422 naming
 * the field); a body over files x 10 MiB + 1 MiB is cut off (413); a body
 * that does not parse is a 400. Once the answer is known the rest of the body
 * is not read: the answer goes out with `Connection: close`. Whatever was
 * written is removed on every path.
 */
export class MultipartUploadReceiver {
  readonly maxBodyBytes: number;
  /** Bytes held in memory by files written while they arrive, across this process's requests (ADR 0056). */
  readonly streamedWrites: ByteBudget;

  constructor(private readonly options: ReceiverOptions) {
    this.maxBodyBytes = options.maxFiles * MAX_FILE_BYTES + 1024 * 1024;
    this.streamedWrites = options.streamedWrites ?? streamedWritesBudget;
  }

  /** Where bodies are read to; only this receiver's `*.part` files live there. */
  get tmpDir(): string {
    return this.options.tmpDir;
  }

  /** `newKey`: where a file may be written while it arrives; without it (or a storage that streams) files go to temp files. */
  async receive(ctx: Context, newKey?: NewFileKey): Promise<{ upload: ReceivedUpload; cleanup: () => Promise<void> }> {
    const empty = { upload: { files: [], categoryId: undefined, errors: {} }, cleanup: async () => undefined };
    const declared = Number(ctx.get('Content-Length') || 0);
    if (declared > this.maxBodyBytes) {
      closeAfterAnswer(ctx);
      throw new HttpError(413);
    }
    if (!ctx.is('multipart')) {
      ctx.req.resume();
      return empty;
    }
    await mkdir(this.options.tmpDir, { recursive: true });
    const storage = this.options.storage;
    // A file holds at most MAX_FILE_BYTES, and no more than the body it comes in, when the body's length is known.
    const fileBytes = declared > 0 ? Math.min(declared, MAX_FILE_BYTES) : MAX_FILE_BYTES;
    const target =
      newKey && storage?.beginWrite
        ? { storage: storage as Required<Pick<FileStoragePort, 'beginWrite'>> & FileStoragePort, newKey, budget: this.streamedWrites, fileBytes }
        : undefined;
    const state = newReadState(new TempFileEngine(this.options.tmpDir, this.options.sniffer, target));
    const parsed: unknown = this.parser(state)(ctx, async () => undefined);
    this.countBytes(ctx.req, state);
    try {
      await Promise.race([parsed, state.decided]);
    } catch (error) {
      // A body not read to its end is not read further: the answer closes the connection (below), and the clean-up
      // may wait on storage (writes that began while the body arrived, ADR 0056) while multer drains the request.
      if (!ctx.req.readableEnded) ctx.req.socket.pause();
      // Stop parsing and writing, and let no temp file outlive the answer.
      state.busboy?.destroy(new Error('multipart read stopped'));
      await state.engine.discardAll();
      const answer = this.explain(error, state.engine);
      // The rest of the body is not worth reading; a 400 body may have lost its framing too.
      if (!ctx.req.readableEnded || (answer instanceof HttpError && answer.status === 400)) closeAfterAnswer(ctx);
      throw answer;
    }
    const files = ((ctx.request as { files?: multer.File[] }).files ?? []) as Array<multer.File & TempFileInfo>;
    const cleanup = async () => {
      await Promise.all(files.filter((file) => file.path !== '').map((file) => rm(file.path, { force: true })));
    };
    return {
      upload: {
        files: files
          .sort((a, b) => a.index - b.index)
          .map((file) => ({
            index: file.index,
            name: baseFileName(file.originalname),
            size: file.size,
            contentType: file.contentType,
            sha256: file.sha256,
            localPath: file.path,
            ...(file.written ? { written: file.written } : {}),
          })),
        ...this.fieldsOf(ctx, state),
      },
      cleanup,
    };
  }

  /** `category_id` and the problems found in the form fields. */
  private fieldsOf(ctx: Context, state: ReadState): Pick<ReceivedUpload, 'categoryId' | 'errors'> {
    const body = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
    const rawCategory = body.category_id;
    const errors: Record<string, string[]> = {};
    for (const index of state.notFiles) errors[`files.${index}`] = [`The files.${index} field must be a file.`];
    if (state.categoryAsFile) errors.category_id = ['The category_id field must be an integer.'];
    else if (rawCategory !== undefined && typeof rawCategory !== 'string') errors.category_id = ['The category_id field must be a single value.'];
    return { categoryId: typeof rawCategory === 'string' ? rawCategory : undefined, errors };
  }

  private parser(state: ReadState) {
    const maxFiles = this.options.maxFiles;
    const options = {
      storage: state.engine,
      // File names are UTF-8 as browsers and curl send them (busboy's default is latin1).
      defParamCharset: 'utf8',
      // busboy's own base name turns "..", "." and "dir/" into "", and multer drops a file with an empty name
      // without a word; we take the whole name and reduce it ourselves (baseFileName falls back to "file").
      preservePath: true,
      fileFilter: (_req: IncomingMessage, file: multer.File, accept: (error: Error | null, take?: boolean) => void) => {
        if (!FILE_FIELDS.has(file.fieldname)) return accept(null, false);
        if (++state.accepted <= maxFiles) return accept(null, true);
        const error = limitError('LIMIT_FILE_COUNT');
        state.decide(error);
        accept(error);
      },
      streamHandler: (req: IncomingMessage, busboy: Busboy) => {
        state.busboy = busboy;
        this.watchParts(busboy, state);
        req.pipe(busboy);
      },
      // No `files` limit: busboy would count file parts of every field, ignored ones too; the filter counts `files`.
      limits: {
        fileSize: MAX_FILE_BYTES,
        fields: 20,
        fieldSize: 1024,
        fieldNameSize: 100,
        parts: maxFiles + 20,
        headerPairs: 50,
      },
    } as multer.Options;
    return multer(options).any();
  }

  /** Listens to busboy next to multer: to count nameless file parts, and to know an answer as soon as busboy does. */
  private watchParts(busboy: Busboy, state: ReadState): void {
    // Before multer's own listener, which skips a file part without a file name: it is still a file part.
    busboy.prependListener('file', (name: string, stream: Readable, info: { filename?: string }) => {
      if (name === 'category_id') state.categoryAsFile = true;
      if (!FILE_FIELDS.has(name)) return;
      if (!info.filename) info.filename = 'file';
      stream.once('limit', () => state.decide(limitError('LIMIT_FILE_SIZE')));
    });
    busboy.on('field', (name: string, _value: string, info: { valueTruncated?: boolean }) => {
      if (!FILE_FIELDS.has(name)) return;
      const index = state.engine.reserveIndex();
      state.notFiles.push(index);
      if (info.valueTruncated)
        state.decide(new ValidationError(`The files.${index} field must be a file.`, { [`files.${index}`]: [`The files.${index} field must be a file.`] }));
    });
    busboy.on('partsLimit', () => state.decide(limitError('LIMIT_PART_COUNT')));
    busboy.on('fieldsLimit', () => state.decide(limitError('LIMIT_FIELD_COUNT')));
    busboy.on('error', (error: unknown) => state.decide(error));
  }

  /** Counts body bytes as they arrive; past the limit the answer is 413. */
  private countBytes(req: IncomingMessage, state: ReadState): void {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > this.maxBodyBytes) state.decide(new BodyTooLargeError('body too large'));
    });
  }

  /** Turns the reason a read stopped into the answer for the client. */
  private explain(error: unknown, engine: TempFileEngine): Error {
    if (error instanceof BodyTooLargeError) return new HttpError(413);
    if (error instanceof ValidationError || error instanceof HttpError) return error;
    const code = (error as { code?: string }).code;
    switch (code) {
      case 'LIMIT_FILE_SIZE': {
        const field = `files.${engine.currentIndex}`;
        return new ValidationError(`The ${field} field must not be greater than ${MAX_FILE_BYTES / 1024} kilobytes.`, {
          [field]: [`The ${field} field must not be greater than ${MAX_FILE_BYTES / 1024} kilobytes.`],
        });
      }
      case 'LIMIT_FILE_COUNT': {
        const message = `The files field must not have more than ${this.options.maxFiles} items.`;
        return new ValidationError(message, { files: [message] });
      }
      case 'LIMIT_PART_COUNT':
      case 'LIMIT_FIELD_COUNT':
      case 'LIMIT_FIELD_KEY':
      case 'LIMIT_FIELD_VALUE':
      case 'LIMIT_FIELD_NESTING':
      case 'INVALID_FIELD_NAME': {
        const field = (error as { field?: string }).field ?? 'body';
        return ValidationError.invalidData({ [field]: ['The request has too many or too large form fields.'] });
      }
      default:
        return new HttpError(400, Messages.MULTIPART_UNREADABLE);
    }
  }
}

function newReadState(engine: TempFileEngine): ReadState {
  let reject: (reason: unknown) => void = () => undefined;
  const decided = new Promise<never>((_resolve, rejectDecided) => {
    reject = rejectDecided;
  });
  // The first answer wins; later ones (busboy's error after we stop it, say) change nothing.
  let done = false;
  const decide = (reason: unknown) => {
    if (done) return;
    done = true;
    reject(reason);
  };
  // Nobody may be waiting any more when a late reason arrives.
  decided.catch(() => undefined);
  return { engine, busboy: null, accepted: 0, notFiles: [], categoryAsFile: false, decide, decided };
}

/** How long a closing connection is held, unread, so that a client still sending gets to read the answer. */
const LINGER_MS = 1_000;

/**
 * The answer goes out without the rest of the body being read, so the
 * connection cannot carry another request: it closes once the answer is out,
 * rather than reading (maybe endless) bytes nobody needs. Closing a socket
 * with unread bytes resets it, and a client still sending would then lose
 * the answer on its next write; so the socket is half-closed and stops
 * reading (the client's writes stall instead), and is destroyed when the
 * client goes or after LINGER_MS.
 */
function closeAfterAnswer(ctx: Context): void {
  ctx.set('Connection', 'close');
  const socket = ctx.req.socket;
  ctx.res.once('finish', () => {
    // Node has just ended the socket (Connection: close) and would destroy it as soon as the end is written.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- the very function Node added as the listener, not a call
    socket.removeListener('finish', socket.destroy);
    ctx.req.pause();
    socket.pause();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
