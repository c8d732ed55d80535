import { missingSecretKeys, ReencryptWebhookSecretsUseCase } from '@logi/domain';
import { requireDirectory, type CommandContext } from './cli-commands.js';
import { CommandError, UsageError } from './cli-io.js';

/** The last day of attempts is what an operator looks at to tell a failing endpoint. */
const DAY_SECONDS = 86_400;

function table(ctx: CommandContext, header: string[], rows: string[][]): void {
  const widths = header.map((title, index) => Math.max(title.length, ...rows.map((row) => row[index]!.length)));
  const line = (cells: string[]) => cells.map((cell, index) => (index === cells.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  ');
  ctx.io.out(line(header));
  for (const row of rows) ctx.io.out(line(row));
}

function when(seconds: unknown): string {
  return seconds == null ? '-' : new Date(Number(seconds) * 1000).toISOString().replace('.000Z', 'Z');
}

function endpointIdOf(value: string | undefined): number {
  if (value === undefined || !/^[0-9]{1,15}$/.test(value) || Number(value) < 1)
    throw new UsageError('--endpoint <id> is required (a webhook endpoint id, see webhooks:list).');
  return Number(value);
}

/**
 * Every webhook endpoint (or one directory's), with what an operator needs
 * to see a failing one: attempts waiting, failures and successes of the
 * last 24 hours, the last success, since when it fails, why it is disabled.
 */
export async function webhooksList(ctx: CommandContext, options: { directory?: string }): Promise<void> {
  const knex = ctx.knex();
  await ctx.db.migrate(knex);
  const since = Math.floor(Date.now() / 1000) - DAY_SECONDS;
  const query = knex('webhook_endpoints as w')
    .select('w.id', 'w.directory', 'w.url', 'w.enabled', 'w.disabled_reason', 'w.failing_since')
    .select(knex.raw("SUM(CASE WHEN d.status = 'pending' THEN 1 ELSE 0 END) AS pending"))
    .select(knex.raw("SUM(CASE WHEN d.status = 'failed' AND d.created >= ? THEN 1 ELSE 0 END) AS failed_24h", [since]))
    .select(knex.raw("SUM(CASE WHEN d.status = 'succeeded' AND d.created >= ? THEN 1 ELSE 0 END) AS succeeded_24h", [since]))
    .select(knex.raw("MAX(CASE WHEN d.status = 'succeeded' THEN d.created END) AS last_success"))
    .leftJoin('webhook_deliveries as d', 'd.endpoint_id', 'w.id')
    .groupBy('w.id', 'w.directory', 'w.url', 'w.enabled', 'w.disabled_reason', 'w.failing_since')
    .orderBy('w.id');
  if (options.directory !== undefined) query.where('w.directory', options.directory);
  const rows = (await query) as Array<Record<string, unknown>>;
  if (rows.length === 0) {
    ctx.io.err('No webhook endpoints.');
    return;
  }
  table(
    ctx,
    ['ID', 'DIRECTORY', 'STATE', 'PENDING', 'FAILED_24H', 'OK_24H', 'LAST_SUCCESS', 'FAILING_SINCE', 'URL'],
    rows.map((row) => [
      String(row.id),
      String(row.directory),
      Number(row.enabled) === 1 ? 'enabled' : row.disabled_reason ? 'disabled' : 'paused',
      String(Number(row.pending ?? 0)),
      String(Number(row.failed_24h ?? 0)),
      String(Number(row.succeeded_24h ?? 0)),
      when(row.last_success),
      when(row.failing_since),
      String(row.url),
    ]),
  );
  for (const row of rows) if (row.disabled_reason) ctx.io.err(`endpoint ${String(row.id)}: ${String(row.disabled_reason)}`);
}

/** The latest attempts to one endpoint, newest first, with the answer or error of each. */
export async function webhooksDeliveries(ctx: CommandContext, options: { endpoint?: string; limit?: string }): Promise<void> {
  const endpointId = endpointIdOf(options.endpoint);
  const limit = options.limit === undefined ? 20 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000.');
  const knex = ctx.knex();
  await ctx.db.migrate(knex);
  if (!(await knex('webhook_endpoints').where({ id: endpointId }).first())) throw new CommandError(`Webhook endpoint ${endpointId} does not exist.`);
  const rows = (await knex('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('id', 'desc').limit(limit)) as Array<Record<string, unknown>>;
  if (rows.length === 0) {
    ctx.io.err('No attempts yet.');
    return;
  }
  table(
    ctx,
    ['ID', 'EVENT', 'TYPE', 'ATTEMPT', 'STATUS', 'HTTP', 'CREATED', 'NEXT', 'CLIENT_SEES', 'ERROR'],
    rows.map((row) => [
      String(row.id),
      String(row.event_id),
      String(row.event_type),
      String(row.attempt),
      String(row.status),
      row.response_status == null ? '-' : String(row.response_status),
      when(row.created),
      when(row.next_attempt_at),
      row.error == null ? '' : String(row.error),
      // The client is shown a coarse reason; the operator the sender's detail (addresses, ports, system codes).
      String(row.error_detail ?? row.error ?? ''),
    ]),
  );
}

/** Re-enables an endpoint the service disabled (after its owner fixed it): the failure streak starts afresh. */
export async function webhooksEnable(ctx: CommandContext, options: { endpoint?: string }): Promise<void> {
  const endpointId = endpointIdOf(options.endpoint);
  const knex = ctx.knex();
  await ctx.db.migrate(knex);
  const updated = await knex('webhook_endpoints').where({ id: endpointId }).update({ enabled: 1, disabled_reason: null, failing_since: null });
  if (updated === 0) throw new CommandError(`Webhook endpoint ${endpointId} does not exist.`);
  ctx.io.err(`Webhook endpoint ${endpointId} enabled. Events published while it was disabled are not sent by themselves: its owner can replay them.`);
}

/** How far the publisher is: changes waiting to become events, and the newest event. */
export async function eventsStatus(ctx: CommandContext): Promise<void> {
  const knex = ctx.knex();
  await ctx.db.migrate(knex);
  const pending = (await knex('event_pending').count({ n: '*' }).first()) as { n: unknown };
  const newest = (await knex('events').select('id', 'created').orderBy('id', 'desc').first()) as { id: unknown; created: unknown } | undefined;
  const due = (await knex('webhook_deliveries').where('status', 'pending').count({ n: '*' }).first()) as { n: unknown };
  ctx.io.out(`changes waiting to be published: ${Number(pending.n)}`);
  ctx.io.out(`newest event: ${newest ? `${String(newest.id)} at ${when(newest.created)}` : 'none'}`);
  ctx.io.out(`webhook attempts pending: ${Number(due.n)}`);
}

/**
 * Lets one client directory aim webhooks at private targets (http, loopback, private, link-local addresses): an
 * on-premises receiver, without opening the internal network to every client (WEBHOOK_ALLOW_PRIVATE_TARGETS).
 */
export async function webhooksAllowPrivate(ctx: CommandContext, options: { directory?: string }): Promise<void> {
  const directory = requireDirectory(options.directory);
  const knex = ctx.knex();
  await ctx.db.migrate(knex);
  if (!(await ctx.db.clients(knex).findByDirectory(directory))) throw new CommandError(`Client directory "${directory}" does not exist.`);
  const changed = await ctx.db.webhookTargets(knex).allow(directory, Math.floor(Date.now() / 1000));
  ctx.io.err(
    changed
      ? `Client directory "${directory}" may now aim webhooks at private targets (http, loopback, private and link-local addresses).`
      : `Client directory "${directory}" was already allowed private webhook targets.`,
  );
}

/** Withdraws it: the directory's endpoints at private targets are refused at their next delivery (`refused: private address`). */
export async function webhooksDenyPrivate(ctx: CommandContext, options: { directory?: string }): Promise<void> {
  const directory = requireDirectory(options.directory);
  const knex = ctx.knex();
  await ctx.db.migrate(knex);
  const changed = await ctx.db.webhookTargets(knex).deny(directory);
  ctx.io.err(
    changed
      ? `Client directory "${directory}" may no longer aim webhooks at private targets; deliveries to such endpoints are refused from now on.`
      : `Client directory "${directory}" was not allowed private webhook targets.`,
  );
  if (ctx.allowPrivateTargetsEverywhere) ctx.io.err('Note: WEBHOOK_ALLOW_PRIVATE_TARGETS=true still allows them for every directory.');
}

/** The directories allowed private targets, and whether the global switch allows them for all. */
export async function webhooksPrivateTargets(ctx: CommandContext): Promise<void> {
  const knex = ctx.knex();
  await ctx.db.migrate(knex);
  const allowed = await ctx.db.webhookTargets(knex).list();
  if (ctx.allowPrivateTargetsEverywhere) ctx.io.err('WEBHOOK_ALLOW_PRIVATE_TARGETS=true: every directory may aim webhooks at private targets.');
  if (allowed.length === 0) {
    ctx.io.err('No directory is allowed private webhook targets by itself.');
    return;
  }
  table(
    ctx,
    ['DIRECTORY', 'ALLOWED_AT'],
    allowed.map((row) => [row.directory, when(row.allowedAt)]),
  );
}

/**
 * Encrypts every stored webhook secret (current and previous) with the current key: plain ones from before
 * encryption and ones under an older key. Idempotent; safe while APIs and workers run.
 */
export async function webhooksReencrypt(ctx: CommandContext): Promise<void> {
  const cipher = ctx.secretCipher();
  if (cipher.keyIds.length === 0) throw new CommandError('SECRETS_ENCRYPTION_KEYS is not set: there is no key to encrypt webhook secrets with.');
  const knex = ctx.knex();
  await ctx.db.migrate(knex);
  const store = ctx.db.webhookSecrets(knex);
  const missing = missingSecretKeys(await store.keyIdsInUse(), cipher);
  if (missing.length > 0)
    throw new CommandError(
      `SECRETS_ENCRYPTION_KEYS lacks ${missing.map((id) => `"${id}"`).join(', ')}, which stored webhook secrets are encrypted with: add the old key after the new one, then run this again.`,
    );
  const result = await new ReencryptWebhookSecretsUseCase({ store, cipher }).execute();
  ctx.io.out(
    `Re-encrypted ${result.reencrypted} webhook secret${result.reencrypted === 1 ? '' : 's'} with key "${cipher.keyIds[0]!}" ` +
      `(${result.wasPlain} were plain text) across ${result.endpoints} endpoint${result.endpoints === 1 ? '' : 's'}; ` +
      `${result.skipped} changed meanwhile and already use the current key.`,
  );
}
