/**
 * An `exports` row written straight into the table, as a test plants one (an export another runner holds, one a
 * killed worker left): the columns every row needs, with `extra` over them. `created` in Unix seconds.
 */
export function exportRow(directory: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    directory,
    status: 'queued',
    created: Math.floor(Date.now() / 1000),
    filters: '{}',
    documents: '["pdf"]',
    lang: 'en',
    duplicate: 0,
    csv: 1,
    done: 0,
    events_cursor: 0,
    ...extra,
  };
}

/** A running export whose lease is an hour ahead: another runner holds it. */
export function heldExportRow(directory: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return exportRow(directory, { status: 'running', attempt: 1, lease_until: Date.now() + 3_600_000, ...extra });
}
