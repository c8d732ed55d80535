import type { z } from 'zod';
import type { FieldErrors } from './common.errors.js';

/** Turns zod issues into `{ field: [messages] }`, keyed by the top-level field the client sent. */
export function fieldErrorsFromZod(error: z.ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? String(issue.path[0]) : 'query';
    const list = (errors[field] ??= []);
    if (!list.includes(issue.message)) list.push(issue.message);
  }
  return errors;
}
