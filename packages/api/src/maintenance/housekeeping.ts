import type { Container } from 'inversify';
import type { Logger } from 'pino';
import { startPeriodic, sweepTempFiles, type AppConfig, type PeriodicTask } from '@logi/adapters';
import { SweepLeftoversUseCase, type FileStoragePort } from '@logi/domain';
import { Tokens } from '../tokens.js';
import type { MultipartUploadReceiver } from '../uploads/multipart-upload.receiver.js';

const EVERY_MS = 10 * 60_000;
const HOUR_MS = 60 * 60_000;

/**
 * The API's safety net for what a killed process leaves behind: staged
 * uploads and rendered PDFs in storage, and upload temp files on disk. Runs
 * at start and every ten minutes; objects younger than an hour (and than
 * twice the job timeout) are never touched, so no request can lose one.
 */
export function startHousekeeping(container: Container): PeriodicTask {
  const config = container.get<AppConfig>(Tokens.Config);
  const logger = container.get<Logger>(Tokens.Logger);
  const receiver = container.get<MultipartUploadReceiver>(Tokens.UploadReceiver);
  const maxAgeMs = Math.max(HOUR_MS, 2 * config.jobTimeoutMs);
  const sweep = new SweepLeftoversUseCase({ storage: container.get<FileStoragePort>(Tokens.FileStorage), maxAgeMs });
  return startPeriodic(
    'sweep leftovers',
    async () => ({
      ...(await sweep.execute()),
      tempFiles: await sweepTempFiles(receiver.tmpDir, new Date(Date.now() - maxAgeMs)),
    }),
    EVERY_MS,
    logger,
  );
}
