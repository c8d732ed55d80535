// `node api.js` (`pnpm start`): the API, as built by `pnpm build` (packages/api/src/main.ts).
import '@logi/api/main';
