// `node worker.js` (`pnpm worker`): a queue worker, as built by `pnpm build` (packages/worker/src/main.ts).
import { start } from './ensure-build.js';

await start('@logi/worker/main');
