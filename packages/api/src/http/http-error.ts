import { MESSAGE_BY_STATUS } from './error-statuses.js';

/** An error the HTTP layer answers itself (400, 404 path, 405, 413, 414, 429). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string = MESSAGE_BY_STATUS[status] ?? 'Error',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}
