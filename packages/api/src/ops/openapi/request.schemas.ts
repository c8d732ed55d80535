import { z } from 'zod';
import { MAX_FILE_BYTES } from '@logi/domain';

/**
 * Request shapes that the domain does not validate with a zod schema of its
 * own (path ids, the `nr` lookup, the multipart body): written here once, in
 * the words of the rules they document.
 */

/**
 * A path id as a generated client should hold it: an integer. On the wire it
 * is plain digits (up to 15); anything else is not rejected as invalid but
 * names no resource, so it is a 404, as the description says.
 */
export const pathIdSchema = (what: string) =>
  z
    .int()
    .min(1)
    .max(999_999_999_999_999)
    .meta({ description: `${what} ID: a positive integer in plain digits. Anything else (\`abc\`, \`1.5\`, \`-1\`) names no resource (404).` });

export const orderByNrQuerySchema = z.object({
  nr: z
    .string()
    .min(1)
    .max(255)
    // Trimmed first: a value of spaces only is missing (422).
    .regex(/\S/)
    .meta({ description: 'An order number or a fragment of one; trimmed (a value of spaces only is missing), matched literally and case-insensitively.' }),
});

// A binary string's length is its bytes: an empty file, or one over 10 MiB, is a 422.
const binaryFile = z
  .string()
  .min(1)
  .max(MAX_FILE_BYTES)
  .meta({ format: 'binary', contentMediaType: 'application/octet-stream', description: `One file, 1 byte to ${MAX_FILE_BYTES} bytes (10 MiB).` });

export const uploadBodySchema = (maxFiles: number) =>
  z.object({
    files: z
      .array(binaryFile)
      .min(1)
      .max(maxFiles)
      .meta({ description: `One part per file, all named \`files\` (\`files[]\` is accepted too); 1 to ${maxFiles} files.` }),
    category_id: z
      .int()
      .min(1)
      .nullable()
      .optional()
      .meta({ description: 'A file category id (GET /orders/file-categories). Absent, empty or `null`: no category; any other value must be an existing id (else 422).' }),
  });
