import { z } from 'zod';

/**
 * Building blocks for query parameters. Each takes the raw string (one value,
 * already known to be non-empty) and gives a typed value, with messages in the
 * API's style ("The page field must be an integer.").
 */

export function integerField(name: string, min: number, max: number = Number.MAX_SAFE_INTEGER) {
  return z
    .string()
    .regex(/^\d+$/, { error: `The ${name} field must be an integer.` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `The ${name} field must be at least ${min}.` })
        .max(max, { error: `The ${name} field must not be greater than ${max}.` }),
    );
}

export function enumField<const T extends readonly [string, ...string[]]>(name: string, values: T) {
  return z.enum(values, { error: `The selected ${name} is invalid.` });
}

/**
 * A comma-separated list; spaces around items are ignored, an empty item is
 * invalid. It always has an item: an empty value counts as absent, so
 * `.min(1)` never refuses anything, but it tells the document (`minItems`).
 */
export function listField<T extends z.ZodType<unknown, string>>(name: string, item: T) {
  return z
    .string()
    .transform((value) => value.split(',').map((part) => part.trim()))
    .pipe(
      z
        .array(
          z
            .string()
            .min(1, { error: `The ${name} field must not contain empty items.` })
            .pipe(item),
        )
        .min(1)
        .transform((items) => [...new Set(items)] as z.output<T>[]),
    );
}

export function textField(name: string, maxLength = 255) {
  return z.string().max(maxLength, { error: `The ${name} field must not be greater than ${maxLength} characters.` });
}
