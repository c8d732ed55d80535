import type { z } from 'zod';
import type { FieldErrors } from './common.errors.js';

/** Turns zod issues into `{ field: [messages] }`, keyed by the top-level field (dotted for nested). */
export function fieldErrorsFromZod(error: z.ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const field = issue.path.map(String).join('.') || 'query';
    (errors[field] ??= []).push(issue.message);
  }
  return errors;
}
