import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

/**
 * Loaded with `--import` before a process's entry point: appends to
 * MODULE_WATCH_FILE every module the process resolves whose path matches
 * MODULE_WATCH_PATTERN, whether it is required (CommonJS) or imported (ES
 * modules, through a resolve hook on the loader thread).
 */
const file = process.env.MODULE_WATCH_FILE;
const pattern = process.env.MODULE_WATCH_PATTERN;
if (!file || !pattern) throw new Error('MODULE_WATCH_FILE and MODULE_WATCH_PATTERN must be set');
const matches = new RegExp(pattern);

type ResolveFilename = (request: string, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: ResolveFilename };
const resolveFilename = loader._resolveFilename;
loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
  const resolved = resolveFilename.call(this, request, ...rest);
  if (matches.test(resolved)) appendFileSync(file, `${resolved}\n`);
  return resolved;
};

const hooks = `
import { appendFileSync } from 'node:fs';
let file;
let matches;
export function initialize(data) {
  file = data.file;
  matches = new RegExp(data.pattern);
}
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (matches.test(result.url)) appendFileSync(file, result.url + '\\n');
  return result;
}
`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { file, pattern } });
