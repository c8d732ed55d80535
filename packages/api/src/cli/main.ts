import { runCli } from './run-cli.js';

/** `pnpm cli <command>`: operator commands for the schema, fixtures and clients. */
const exitCode = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  // On a terminal a progress bar redraws its line; an empty line ends it.
  progress: process.stderr.isTTY ? (line) => process.stderr.write(line === '' ? '\n' : `\r${line}\x1b[K`) : undefined,
});
process.exitCode = exitCode;
