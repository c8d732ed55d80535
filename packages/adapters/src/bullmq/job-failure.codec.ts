import {
  AuthenticationFailedError,
  DocumentNotWritableError,
  DomainError,
  InvalidJobPayloadError,
  InvoiceNotFoundError,
  OrderNotFoundError,
  ServiceUnavailableError,
  ValidationError,
  type FieldErrors,
} from '@logi/domain';

/**
 * A job's failure crosses Redis as text (`failedReason`). Domain errors are
 * written as this marker plus JSON, so the waiting side can raise the same
 * domain error again (a missing invoice stays a 404, not a 503).
 */
const MARKER = 'DomainError ';

interface EncodedDomainError {
  code: string;
  message: string;
  errors?: FieldErrors;
  reason?: string;
  job?: string;
  issues?: string[];
  document?: string;
}

/** Domain errors the waiting side can rebuild, by code. */
const REBUILD: Record<string, (e: EncodedDomainError) => DomainError> = {
  INVOICE_NOT_FOUND: () => new InvoiceNotFoundError(),
  ORDER_NOT_FOUND: () => new OrderNotFoundError(),
  AUTHENTICATION_FAILED: () => new AuthenticationFailedError(),
  VALIDATION_FAILED: (e) => new ValidationError(e.message, e.errors ?? {}),
  INVALID_JOB_PAYLOAD: (e) => new InvalidJobPayloadError(e.job ?? 'unknown', e.issues ?? []),
  SERVICE_UNAVAILABLE: (e) => new ServiceUnavailableError(e.reason ?? e.message),
  // The detail stays in the worker's log: the waiting side needs only to know the failure is for good.
  DOCUMENT_NOT_WRITABLE: (e) => new DocumentNotWritableError(e.document ?? 'unknown', 'see the worker log'),
};

export function encodeDomainError(error: DomainError): string {
  const encoded: EncodedDomainError = { code: error.code, message: error.message };
  if (error instanceof ValidationError) encoded.errors = error.errors;
  if (error instanceof ServiceUnavailableError) encoded.reason = error.reason;
  if (error instanceof DocumentNotWritableError) encoded.document = error.document;
  if (error instanceof InvalidJobPayloadError) Object.assign(encoded, { job: error.job, issues: [...error.issues] });
  return MARKER + JSON.stringify(encoded);
}

/** The error to raise for a job that failed with `failedReason`. */
export function decodeJobFailure(failedReason: string): Error {
  if (failedReason.startsWith(MARKER)) {
    try {
      const encoded = JSON.parse(failedReason.slice(MARKER.length)) as EncodedDomainError;
      const rebuild = REBUILD[encoded.code];
      if (rebuild) return rebuild(encoded);
      return new Error(`Job failed: ${encoded.code}: ${encoded.message}`);
    } catch {
      // Not ours after all; fall through to the plain error.
    }
  }
  return new Error(`Job failed: ${failedReason}`);
}
