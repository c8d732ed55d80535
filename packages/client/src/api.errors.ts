/** Messages per field of a 422, e.g. `{ per_page: ['The per_page field must not be greater than 500.'] }`. */
export type FieldErrors = Record<string, string[]>;

/**
 * Any answer other than a success, as one exception: the HTTP `status`, the
 * envelope's `message`, the 422 `errors` map (empty otherwise) and its
 * `data` (the attach-files payload of `No files were uploaded`, else null).
 */
export class ApiError extends Error {
  override readonly name: string = 'ApiError';
  readonly status: number;
  readonly errors: FieldErrors;
  readonly data: unknown;
  /** Seconds the server asks to wait (`Retry-After` of a 429, 503 or 409), or null. */
  readonly retryAfterSeconds: number | null;
  /** The server's `X-Request-Id`, to quote when reporting a problem. */
  readonly requestId: string | null;

  constructor(response: Response, body: unknown) {
    const envelope = isEnvelope(body) ? body : null;
    super(envelope?.message ?? (response.statusText || `HTTP ${response.status}`));
    this.status = response.status;
    this.errors = envelope?.errors ?? {};
    this.data = envelope?.data ?? null;
    this.retryAfterSeconds = retryAfterSeconds(response.headers.get('retry-after'));
    this.requestId = response.headers.get('x-request-id');
  }
}

/**
 * 410 from the change feed (or a webhook replay): events past the cursor were
 * already removed by retention (EVENTS_RETENTION_DAYS), or the cursor is from
 * before a restore, so following on would miss changes. Resync from an export
 * (`exports.create`), then follow from its `events_cursor`.
 */
export class EventsExpiredError extends ApiError {
  override readonly name: string = 'EventsExpiredError';
}

/** An export that ended `failed` (`exports.wait`): `item.error` says why; nothing was kept. */
export class ExportFailedError extends Error {
  override readonly name: string = 'ExportFailedError';
  constructor(readonly item: { id: number; error: string | null }) {
    super(item.error ?? `Export ${item.id} failed.`);
  }
}

/**
 * The exception for an answer that is not a success: a 410 of the feed or a replay is `EventsExpiredError`; an
 * export's 410 (`Export has expired.`) stays an `ApiError`.
 */
export function apiErrorOf(response: Response, body: unknown): ApiError {
  const expiredExport = isEnvelope(body) && body.message === 'Export has expired.';
  return response.status === 410 && !expiredExport ? new EventsExpiredError(response, body) : new ApiError(response, body);
}

interface ErrorEnvelope {
  status: number;
  message: string;
  data?: unknown;
  errors?: FieldErrors;
}

function isEnvelope(body: unknown): body is ErrorEnvelope {
  return typeof body === 'object' && body !== null && typeof (body as ErrorEnvelope).message === 'string';
}

/** `Retry-After` in seconds: a number of seconds or an HTTP date (RFC 9110), null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}
