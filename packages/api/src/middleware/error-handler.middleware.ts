import type { Middleware } from 'koa';
import { DomainError, Messages, ServiceUnavailableError, ValidationError, type FieldErrors } from '@logi/domain';
import { MESSAGE_BY_STATUS, STATUS_BY_CODE } from '../http/error-statuses.js';
import { HttpError } from '../http/http-error.js';
import { respond } from '../http/respond.js';
import { toAttachFilesDto } from '../mappers/attach-files.mapper.js';
import type { AppState } from '../http/app-state.js';

interface ErrorResponse {
  status: number;
  message: string;
  data: unknown;
  errors?: FieldErrors;
  headers: Record<string, string>;
}

/** Error payloads that are shown to the client, mapped field by field. */
const DATA_BY_CODE: Record<string, (details: never) => unknown> = {
  NO_FILES_UPLOADED: toAttachFilesDto,
};

/**
 * First in the chain: every error becomes an envelope. Domain errors map by
 * code; unknown errors become a generic 500, logged with the request id, and
 * their messages never reach the client.
 */
export function errorHandler(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new HttpError(404);
    } catch (error) {
      const response = toResponse(error);
      if (response.status >= 500) {
        const level = response.status === 503 ? 'warn' : 'error';
        ctx.state.log[level]({ err: error }, response.status === 503 ? 'dependency unavailable' : 'unhandled error');
      }
      ctx.set(response.headers);
      respond(ctx, response.status, response.message, response.data, response.errors);
    }
  };
}

function toResponse(error: unknown): ErrorResponse {
  if (error instanceof ServiceUnavailableError) {
    return { status: 503, message: Messages.SERVICE_UNAVAILABLE, data: null, headers: { 'Retry-After': String(error.retryAfterSeconds) } };
  }
  if (error instanceof DomainError && STATUS_BY_CODE[error.code]) {
    const toData = DATA_BY_CODE[error.code];
    return {
      status: STATUS_BY_CODE[error.code]!,
      message: error.message,
      data: toData ? toData(error.details as never) : null,
      errors: error instanceof ValidationError ? error.errors : undefined,
      headers: retryAfterOf(error),
    };
  }
  if (error instanceof HttpError) {
    return { status: error.status, message: error.message, data: null, headers: error.headers };
  }
  const status = httpStatusOf(error);
  if (status && status >= 400 && status < 500) {
    return { status, message: MESSAGE_BY_STATUS[status] ?? Messages.BAD_REQUEST, data: null, headers: {} };
  }
  return { status: 500, message: Messages.SERVER_ERROR, data: null, headers: {} };
}

/** A domain error that says when to try again (a key still in use) carries `Retry-After`. */
function retryAfterOf(error: DomainError): Record<string, string> {
  const seconds = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof seconds === 'number' ? { 'Retry-After': String(seconds) } : {};
}

/** Errors thrown by Koa itself (ctx.throw, http-errors) carry a status. */
function httpStatusOf(error: unknown): number | null {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : null;
}
