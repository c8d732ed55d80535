import { API_KEY_MAX_DAYS, API_KEY_SCOPES, parseApiKeyScopes, type ApiKey, type ApiKeyScope } from '@logi/domain';
import { requireDirectory, type CommandContext } from './cli-commands.js';
import { CommandError, UsageError } from './cli-io.js';

const DAY_SECONDS = 86_400;
const MAX_NAME = 100;
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;

const unixNow = () => Math.floor(Date.now() / 1000);

/**
 * A new key of an existing directory, printed once: the key alone on the
 * first line of stdout, `id: <key id>` on the second. Every argument is
 * checked before anything is written.
 */
export async function keysCreate(ctx: CommandContext, options: { directory?: string; name?: string; scopes?: string; expiresInDays?: string }): Promise<void> {
  const directory = requireDirectory(options.directory);
  const name = nameOf(options.name);
  const scopes = scopesOf(options.scopes);
  const days = daysOf(options.expiresInDays);
  await ctx.db.migrate(ctx.knex());
  await requireClient(ctx, directory);
  const apiKey = ctx.hasher.generate();
  const created = unixNow();
  const key = await ctx.db.keys(ctx.knex()).create({
    directory,
    name,
    keyHash: ctx.hasher.hash(apiKey),
    scopes,
    created,
    expires: days === null ? null : created + days * DAY_SECONDS,
  });
  ctx.io.err(`Created key ${key.id} of "${directory}" (scopes ${key.scopes.join(',')}, expires ${when(key.expires)}). It is shown once; store it now:`);
  ctx.io.out(apiKey);
  ctx.io.out(`id: ${key.id}`);
}

/** One line per key of the directory, revoked ones too; never the key or its hash. */
export async function keysList(ctx: CommandContext, options: { directory?: string }): Promise<void> {
  const directory = requireDirectory(options.directory);
  await ctx.db.migrate(ctx.knex());
  await requireClient(ctx, directory);
  const keys = await ctx.db.keys(ctx.knex()).list(directory);
  if (keys.length === 0) ctx.io.err(`No keys in "${directory}".`);
  for (const key of keys) ctx.io.out(keyLine(key));
}

/** The key answers 401 on every API process from the next request on (nothing caches keys). */
export async function keysRevoke(ctx: CommandContext, options: { directory?: string; keyId?: string }): Promise<void> {
  const directory = requireDirectory(options.directory);
  const id = keyIdOf(options.keyId);
  await ctx.db.migrate(ctx.knex());
  await requireClient(ctx, directory);
  const result = await ctx.db.keys(ctx.knex()).revoke(directory, id, unixNow());
  if (!result) throw new CommandError(`--key-id: directory "${directory}" has no key ${id} (see keys:list --directory ${directory}).`);
  ctx.io.out(
    result.revokedNow
      ? `Revoked key ${id} of "${directory}"; it is refused from now on.`
      : `Key ${id} of "${directory}" was already revoked at ${when(result.key.revoked)}.`,
  );
}

export function keyLine(key: ApiKey): string {
  return [
    `id: ${key.id}`,
    `name: ${JSON.stringify(key.name)}`,
    `scopes: ${key.scopes.join(',') || '-'}`,
    `created: ${when(key.created)}`,
    `expires: ${when(key.expires)}`,
    `last used: ${when(key.lastUsed)}`,
    `revoked: ${when(key.revoked)}`,
  ].join('  ');
}

/** ISO 8601 UTC to the second, or `never`. */
function when(seconds: number | null): string {
  return seconds === null ? 'never' : new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

async function requireClient(ctx: CommandContext, directory: string): Promise<void> {
  if (!(await ctx.db.clients(ctx.knex()).findByDirectory(directory))) {
    throw new CommandError(`--directory: client directory "${directory}" does not exist (see clients:list).`);
  }
}

function nameOf(value: string | undefined): string {
  const name = value?.trim() ?? '';
  if (name.length > MAX_NAME || CONTROL.test(name)) throw new UsageError(`--name must be at most ${MAX_NAME} characters, without control characters.`);
  return name;
}

function scopesOf(value: string | undefined): ApiKeyScope[] {
  if (value === undefined) return [...API_KEY_SCOPES];
  const scopes = parseApiKeyScopes(value);
  if (!scopes || scopes.length === 0) {
    throw new UsageError(`--scopes must be a comma-separated list of ${API_KEY_SCOPES.join(', ')} (got "${value}").`);
  }
  return scopes;
}

function daysOf(value: string | undefined): number | null {
  if (value === undefined) return null;
  const days = /^[0-9]{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(days >= 1 && days <= API_KEY_MAX_DAYS))
    throw new UsageError(`--expires-in-days must be a whole number from 1 to ${API_KEY_MAX_DAYS} (got "${value}").`);
  return days;
}

function keyIdOf(value: string | undefined): number {
  if (value === undefined || !/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
    throw new UsageError(`--key-id <id> is required: a key id from keys:list${value === undefined ? '' : ` (got "${value}")`}.`);
  }
  return Number(value);
}
