import { runCli } from './run-cli.js';

/** `pnpm cli <command>`: operator commands for the schema, fixtures and clients. */
const exitCode = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
process.exitCode = exitCode;
