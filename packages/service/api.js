// `node api.js` (`pnpm start`): the API, as built by `pnpm build` (packages/api/src/main.ts).
import { start } from './ensure-build.js';

await start('@logi/api/main');
