import { Messages } from '@logi/domain';

/** Domain error codes to HTTP statuses: the only place the two meet. */
export const STATUS_BY_CODE: Record<string, number> = {
  VALIDATION_FAILED: 422,
  NO_FILES_UPLOADED: 422,
  AUTHENTICATION_FAILED: 401,
  API_KEY_SCOPE_MISSING: 403,
  ORDER_NOT_FOUND: 404,
  IDEMPOTENCY_KEY_IN_USE: 409,
  ORDER_NR_NOT_FOUND: 404,
  INVOICE_NOT_FOUND: 404,
  SERVICE_UNAVAILABLE: 503,
  // A writer refused the invoice's data: the same request fails again, so not a 503 (which clients retry).
  DOCUMENT_NOT_WRITABLE: 500,
  EVENTS_EXPIRED: 410,
  EVENTS_CURSOR_RESTORED: 410,
  TOO_MANY_WAITING_REQUESTS: 429,
  WEBHOOK_ENDPOINT_NOT_FOUND: 404,
  WEBHOOK_REPLAY_RUNNING: 409,
  EXPORT_NOT_FOUND: 404,
  EXPORT_NOT_READY: 409,
  EXPORT_EXPIRED: 410,
  TOO_MANY_EXPORTS: 429,
  EXPORT_STORAGE_QUOTA_EXCEEDED: 429,
  FILE_NOT_FOUND: 404,
  FILE_LINK_INVALID: 403,
  FILE_LINK_EXPIRED: 410,
  FILE_LINK_REVOKED: 410,
};

/** Messages for statuses raised by the HTTP layer itself. */
export const MESSAGE_BY_STATUS: Record<number, string> = {
  400: Messages.BAD_REQUEST,
  401: Messages.AUTHENTICATION_FAILED,
  404: Messages.NOT_FOUND,
  405: Messages.METHOD_NOT_ALLOWED,
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: Messages.PAYLOAD_TOO_LARGE,
  414: Messages.URI_TOO_LONG,
  415: 'Unsupported Media Type',
  431: Messages.HEADER_FIELDS_TOO_LARGE,
  429: Messages.TOO_MANY_ATTEMPTS,
  500: Messages.SERVER_ERROR,
  503: Messages.SERVICE_UNAVAILABLE,
};
