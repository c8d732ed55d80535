import type { Container } from 'inversify';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { AppConfig } from '@logi/config';
import type { FileStoragePort, JobQueuePort, PdfRendererPort } from '@logi/domain';
import { Tokens } from '../../tokens.js';
import type { DependencyCheck } from './readiness.checker.js';

/** Long enough for a healthy dependency under load, short enough for a probe. */
const CHECK_TIMEOUT_MS = 2_000;
/** The first ping launches Chromium (about half a second, more on a cold disk); later ones are cheap. */
const RENDERER_TIMEOUT_MS = 10_000;

/**
 * What this process depends on, as configured: the database for every
 * request (`required`), the rest for some (`partial`: uploads and files need
 * storage, PDFs and exports the queue or the renderer, idempotency keys Redis;
 * lists, lookups and events need none of them). Dependencies are looked up on
 * each check, so a check never builds one at start and always asks the one
 * that requests use.
 */
export function dependencyChecks(container: Container, config: AppConfig): DependencyCheck[] {
  const checks: DependencyCheck[] = [
    // Every route but the documentation reads the database (the API keys are there): without it nothing is served.
    { name: 'database', need: 'required', timeoutMs: CHECK_TIMEOUT_MS, probe: () => container.get<Knex>(Tokens.Knex).raw('select 1') },
    { name: 'storage', need: 'partial', timeoutMs: CHECK_TIMEOUT_MS, probe: () => container.get<FileStoragePort>(Tokens.FileStorage).ping() },
    { name: 'job_queue', need: 'partial', timeoutMs: CHECK_TIMEOUT_MS, probe: () => container.get<JobQueuePort>(Tokens.JobQueue).ping() },
  ];
  if (config.redis) {
    // The rate limiter's own connection; the queue's is checked by job_queue.
    checks.push({ name: 'redis', need: 'partial', timeoutMs: CHECK_TIMEOUT_MS, probe: () => container.get<Redis>(Tokens.Redis).ping() });
  } else {
    // Embedded profile: PDFs are printed in this process, so its browser is a dependency.
    checks.push({
      name: 'pdf_renderer',
      need: 'partial',
      timeoutMs: RENDERER_TIMEOUT_MS,
      probe: () => container.get<PdfRendererPort>(Tokens.PdfRenderer).ping(),
    });
  }
  return checks;
}
