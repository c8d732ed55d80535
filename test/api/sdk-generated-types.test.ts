import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateTypes, GENERATED_TYPES_PATH } from '../../packages/client/scripts/generate-types.js';

describe("the SDK's generated types", () => {
  it('when generated afresh from the document the server builds, then they equal the checked-in ones (else run pnpm client:generate)', async () => {
    const fresh = await generateTypes();
    expect(fresh).toContain('"/invoices/{invoice_id}/pdf"');
    expect(await readFile(GENERATED_TYPES_PATH, 'utf8')).toBe(fresh);
  });
});
