import { mkdir, rm } from 'node:fs/promises';
import type { Context } from 'koa';
import multer from '@koa/multer';
import { baseFileName, MAX_FILE_BYTES, ValidationError, type ReceivedUpload } from '@logi/domain';
import { HttpError } from '../http/http-error.js';
import { TempFileEngine, type TempFileInfo } from './temp-file.engine.js';

const FILE_FIELDS = new Set(['files', 'files[]']);

export interface ReceiverOptions {
  tmpDir: string;
  maxFiles: number;
}

/** Body too large: raised from the byte counter into multer, answered 413. */
class BodyTooLargeError extends Error {}

/**
 * Reads a multipart upload into temp files. Limits are enforced while
 * reading: a file over 10 MiB or one file too many stops the read (422 naming
 * the field); a body over files x 10 MiB + 1 MiB is cut off (413); a body
 * that does not parse is a 400. Whatever was written is removed on every path.
 */
export class MultipartUploadReceiver {
  readonly maxBodyBytes: number;

  constructor(private readonly options: ReceiverOptions) {
    this.maxBodyBytes = options.maxFiles * MAX_FILE_BYTES + 1024 * 1024;
  }

  /** Where bodies are read to; only this receiver's `*.part` files live there. */
  get tmpDir(): string {
    return this.options.tmpDir;
  }

  async receive(ctx: Context): Promise<{ upload: ReceivedUpload; cleanup: () => Promise<void> }> {
    const empty = { upload: { files: [], categoryId: undefined, errors: {} }, cleanup: async () => undefined };
    const declared = Number(ctx.get('Content-Length') || 0);
    if (declared > this.maxBodyBytes) {
      ctx.set('Connection', 'close');
      throw new HttpError(413);
    }
    if (!ctx.is('multipart')) {
      ctx.req.resume();
      return empty;
    }
    await mkdir(this.options.tmpDir, { recursive: true });
    const engine = new TempFileEngine(this.options.tmpDir);
    const received = this.countBytes(ctx);
    try {
      await this.parser(engine)(ctx, async () => undefined);
    } catch (error) {
      throw await this.explain(ctx, error, engine, received);
    }
    const files = ((ctx.request as { files?: multer.File[] }).files ?? []) as Array<multer.File & TempFileInfo>;
    const cleanup = async () => {
      await Promise.all(files.map((file) => rm(file.path, { force: true })));
    };
    const body = ((ctx.request as { body?: Record<string, unknown> }).body ?? {}) as Record<string, unknown>;
    const rawCategory = body.category_id;
    const errors: Record<string, string[]> = {};
    if (rawCategory !== undefined && typeof rawCategory !== 'string') errors.category_id = ['The category_id field must be a single value.'];
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
          })),
        categoryId: typeof rawCategory === 'string' ? rawCategory : undefined,
        errors,
      },
      cleanup,
    };
  }

  private parser(engine: TempFileEngine) {
    const options = {
      storage: engine,
      // File names are UTF-8 as browsers and curl send them (busboy's default is latin1).
      defParamCharset: 'utf8',
      fileFilter: (_req, file, accept) => accept(null, FILE_FIELDS.has(file.fieldname)),
      limits: {
        fileSize: MAX_FILE_BYTES,
        files: this.options.maxFiles,
        fields: 20,
        fieldSize: 1024,
        fieldNameSize: 100,
        parts: this.options.maxFiles + 20,
        headerPairs: 50,
      },
    } as multer.Options;
    return multer(options).any();
  }

  /** Counts body bytes as they arrive; past the limit the read is aborted. */
  private countBytes(ctx: Context): { bytes: number; ended: Promise<void> } {
    const state = { bytes: 0, ended: Promise.resolve() };
    const req = ctx.req;
    state.ended = new Promise((resolve) => {
      req.once('end', resolve);
      req.once('close', resolve);
    });
    req.on('data', (chunk: Buffer) => {
      state.bytes += chunk.length;
      if (state.bytes > this.maxBodyBytes) req.emit('error', new BodyTooLargeError('body too large'));
    });
    return state;
  }

  /** Turns a parse failure into the answer for the client, after the body was read to its end. */
  private async explain(ctx: Context, error: unknown, engine: TempFileEngine, received: { ended: Promise<void> }): Promise<Error> {
    const code = (error as { code?: string }).code;
    if (error instanceof BodyTooLargeError) {
      ctx.set('Connection', 'close');
      return new HttpError(413);
    }
    // Let the rest of the body arrive (it is bounded by the byte counter) so the client reads our answer.
    await Promise.race([received.ended, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
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
        ctx.set('Connection', 'close');
        return new HttpError(400, 'Bad Request: the multipart body could not be read.');
    }
  }
}
