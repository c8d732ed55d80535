// `node cli.js <command>` (`pnpm cli <command>`): the operator commands, as built by `pnpm build` (packages/api/src/cli/main.ts).
import { start } from './ensure-build.js';

await start('@logi/api/cli');
