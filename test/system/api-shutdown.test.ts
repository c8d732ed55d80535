import { describe, expect, it } from 'vitest';
import type { PdfRendererPort } from '@logi/domain';
import { Tokens } from '@logi/api';
import { shutdownGraceMs } from '../../packages/api/src/server.js';
import { startTestApi } from '../support/api-harness.js';

describe('API shutdown bounds', () => {
  it.each([
    [30_000, 35_000],
    [60_000, 65_000],
    [1_000, 10_000],
  ])('when JOB_TIMEOUT_MS is %i, then in-flight requests get %i ms to finish', (jobTimeoutMs, graceMs) => {
    expect(shutdownGraceMs(jobTimeoutMs)).toBe(graceMs);
  });

  it('when a dependency never finishes closing, then stop() still returns within its budget and the dependencies after it close', async () => {
    const logLines: Array<Record<string, unknown>> = [];
    const api = await startTestApi({}, { profile: 'embedded', logLines });
    // A browser stuck so hard that even closing it hangs.
    const stuck: PdfRendererPort = {
      render: async () => Buffer.from('%PDF-'),
      ping: async () => undefined,
      close: () => new Promise<void>(() => undefined),
    };
    api.container.unbind(Tokens.PdfRenderer);
    api.container.bind(Tokens.PdfRenderer).toConstantValue(stuck);

    const started = Date.now();
    await api.stop();
    const elapsed = Date.now() - started;
    // The close budget (5 s) waited on the renderer, and no longer.
    expect(elapsed).toBeGreaterThan(3_000);
    expect(elapsed).toBeLessThan(8_000);
    expect(logLines.some((l) => l.msg === 'closing the PDF renderer failed')).toBe(true);
    expect(logLines.at(-1)?.msg).toBe('API stopped');
    // The database comes after the renderer, and was still closed.
    await expect(api.knex.raw('select 1')).rejects.toThrow();
  });
});
