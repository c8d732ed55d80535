// A process with the API's and the worker's exit path and nothing else, for test/adapters/close-with-grace.shutdown.test.ts.
import { pino } from 'pino';
import { exitGracefully } from '@logi/adapters';

const stopMs = Number(process.env.STOP_MS ?? 0);
const logger = pino({ base: null });
exitGracefully({
  logger,
  limitMs: Number(process.env.LIMIT_MS ?? 5_000),
  stop: async () => {
    await new Promise((resolve) => setTimeout(resolve, stopMs));
    if (process.env.STOP_FAILS) throw new Error('could not close');
    logger.info('stopped');
  },
});
// Keeps the process alive, as a listener would.
setInterval(() => undefined, 60_000);
if (process.env.TRIGGER === 'rejection') void Promise.reject(new Error('nobody caught me'));
if (process.env.TRIGGER === 'exception')
  setTimeout(() => {
    throw new Error('thrown in a timer');
  }, 0);
process.stdout.write('{"msg":"ready"}\n');
