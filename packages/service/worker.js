// `node worker.js` (`pnpm worker`): a queue worker, as built by `pnpm build` (packages/worker/src/main.ts).
import '@logi/worker/main';
