/** The error catalogue: message texts exactly as the API spec states them. */
export const Messages = {
  AUTHENTICATION_FAILED: 'Authentication failed',
  ORDER_NOT_FOUND: 'Order not found',
  INVOICE_NOT_FOUND: 'Invoice not found',
  FILES_REQUIRED: 'The files field is required.',
  NR_REQUIRED: 'The nr field is required.',
  INVALID_DATA: 'The given data was invalid.',
  NO_FILES_UPLOADED: 'No files were uploaded',
  FILES_UPLOADED: 'Files uploaded',
  /** A file of a partly stored upload whose job the queue did not finish in time. */
  FILE_NOT_STORED_IN_TIME: 'The file could not be stored in time; nothing was kept. Send it again.',
  /** A file that would take the directory past UPLOAD_QUOTA_MB_PER_DAY. */
  UPLOAD_QUOTA_EXCEEDED: 'Daily upload quota exceeded.',
  IDEMPOTENCY_KEY_TOO_LONG: 'The Idempotency-Key header must not be greater than 255 characters.',
  IDEMPOTENCY_KEY_INVALID: 'The Idempotency-Key header must contain only visible ASCII characters.',
  IDEMPOTENCY_KEY_REUSED: 'The Idempotency-Key header was already used for a different request.',
  IDEMPOTENCY_KEY_IN_USE: 'A request with this Idempotency-Key is still being processed; try again shortly.',
  TOO_MANY_ATTEMPTS: 'Too Many Attempts.',
  NOT_FOUND: 'Not Found',
  METHOD_NOT_ALLOWED: 'Method Not Allowed',
  PAYLOAD_TOO_LARGE: 'Payload Too Large',
  URI_TOO_LONG: 'URI Too Long',
  BAD_REQUEST: 'Bad Request',
  MULTIPART_UNREADABLE: 'Bad Request: the multipart body could not be read.',
  HEADER_FIELDS_TOO_LARGE: 'Request Header Fields Too Large',
  SERVICE_UNAVAILABLE: 'Service Unavailable',
  SERVER_ERROR: 'Server Error',
  OK: 'OK',
  EVENTS_EXPIRED: 'Events after this cursor are no longer kept.',
  EVENTS_CURSOR_RESTORED: 'This cursor is from before a restore; resynchronise.',
  TOO_MANY_WAITING_REQUESTS: 'Too many waiting requests.',
  WEBHOOK_ENDPOINT_NOT_FOUND: 'Webhook endpoint not found',
  WEBHOOK_REPLAY_RUNNING: 'A replay of this endpoint is still running.',
  FILE_NOT_FOUND: 'File not found',
  FILE_LINK_INVALID: 'Invalid file link',
  FILE_LINK_EXPIRED: 'File link expired',
  FILE_LINK_REVOKED: 'File link revoked',
} as const;

export function orderNrNotFoundMessage(nr: string): string {
  return `Order with given nr (${nr}) not found`;
}

/** 403: a valid key without the scope its route needs. */
export function apiKeyScopeMissingMessage(scope: string): string {
  return `This API key lacks the ${scope} scope.`;
}
