import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A pino logger at `info` whose JSON lines are parsed into `lines`, for tests that read what was logged. */
export function capturedLog(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { logger, lines };
}
