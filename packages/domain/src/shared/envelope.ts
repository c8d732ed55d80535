import type { FieldErrors } from './common.errors.js';

/** The one shape of every JSON response. */
export interface Envelope<T = unknown> {
  status: number;
  message: string;
  data: T | null;
  errors?: FieldErrors;
}

export function envelope<T>(status: number, message: string, data: T | null, errors?: FieldErrors): Envelope<T> {
  const body: Envelope<T> = { status, message, data };
  if (errors && Object.keys(errors).length > 0) body.errors = errors;
  return body;
}
