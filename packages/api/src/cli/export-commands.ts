import type { CommandContext } from './cli-commands.js';
import { UsageError } from './cli-io.js';

function when(seconds: unknown): string {
  return seconds == null ? '-' : new Date(Number(seconds) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * The newest exports (or one directory's), with what an operator needs to see a stuck or failing one: status,
 * progress, attempts, when its lease runs out, its archive's size, when it expires, and why it failed.
 */
export async function exportsList(ctx: CommandContext, options: { directory?: string; limit?: string }): Promise<void> {
  const limit = options.limit === undefined ? 50 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000.');
  const knex = ctx.knex();
  await ctx.db.migrate(knex);
  const query = knex('exports').orderBy('id', 'desc').limit(limit);
  if (options.directory !== undefined) query.where('directory', options.directory);
  const rows = (await query) as Array<Record<string, unknown>>;
  if (rows.length === 0) {
    ctx.io.err('No exports.');
    return;
  }
  const header = ['ID', 'DIRECTORY', 'STATUS', 'DONE', 'ATTEMPT', 'CREATED', 'FINISHED', 'LEASE_UNTIL', 'SIZE', 'EXPIRES'];
  const cells = rows.map((row) => [
    String(row.id),
    String(row.directory),
    String(row.status),
    `${Number(row.done)}/${row.total == null ? '?' : Number(row.total)}`,
    String(Number(row.attempt)),
    when(row.created),
    when(row.finished),
    row.lease_until == null ? '-' : new Date(Number(row.lease_until)).toISOString(),
    row.size == null ? '-' : String(Number(row.size)),
    when(row.expires),
  ]);
  const widths = header.map((title, index) => Math.max(title.length, ...cells.map((row) => row[index]!.length)));
  const line = (values: string[]) => values.map((cell, index) => (index === values.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  ');
  ctx.io.out(line(header));
  for (const row of cells) ctx.io.out(line(row));
  for (const row of rows) if (row.error) ctx.io.err(`export ${String(row.id)}: ${String(row.error)}`);
}
