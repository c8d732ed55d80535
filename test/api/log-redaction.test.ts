import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { KEYS } from '../support/test-fixture.js';

/**
 * A database fault while a webhook endpoint is created: the client gets the
 * documented envelope, and the log lines (written by the logger the API
 * process uses) hold the SQL text but none of the values bound to it, no
 * signing secret and no API key.
 */
let api: TestApi;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, { label: 'log_redaction', logLines: lines, worker: false });
});

afterAll(async () => {
  await api?.stop();
});

const embedded = () => api.config.databaseUrl === null;

/**
 * Makes the database refuse the insert of a webhook endpoint, through a
 * trigger. MariaDB: with the server's lock-wait error (1205, what a held row
 * lock gives after innodb_lock_wait_timeout, here at once), a 503. SQLite: an
 * abort (a real lock would block this very process: better-sqlite3 waits for
 * a lock synchronously), an unexpected fault, a 500. knex puts the statement
 * into the error's message either way.
 */
async function refuseWebhookInserts(): Promise<() => Promise<void>> {
  await api.knex.raw(
    embedded()
      ? "CREATE TRIGGER logi_test_refuse BEFORE INSERT ON webhook_endpoints BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
      : "CREATE TRIGGER logi_test_refuse BEFORE INSERT ON webhook_endpoints FOR EACH ROW SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 1205, MESSAGE_TEXT = 'Lock wait timeout exceeded; try restarting transaction'",
  );
  return async () => {
    await api.knex.raw('DROP TRIGGER logi_test_refuse');
  };
}

describe('secrets in logs', () => {
  it('when the database refuses a new webhook endpoint (a lock wait timeout on MariaDB), then the envelope, and the log has the SQL but no bound value, secret or key', async () => {
    const marker = `marker-${Date.now()}-bound-value`;
    const release = await refuseWebhookInserts();
    let response: Response;
    try {
      response = await api.call('/webhook-endpoints', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'redaction-1' },
        body: JSON.stringify({ url: `https://127.0.0.1:9/${marker}`, description: marker }),
      });
    } finally {
      await release();
    }
    const answer = await envelopeOf(response);
    if (embedded()) {
      expect(answer).toEqual({ status: 500, message: 'Server Error', data: null });
    } else {
      expect(answer).toEqual({ status: 503, message: 'Service Unavailable', data: null });
      expect(response.headers.get('Retry-After')).toMatch(/^\d+$/);
    }

    const failure = lines.find((line) => line.requestId === 'redaction-1' && line.msg === (embedded() ? 'unhandled error' : 'dependency unavailable'));
    expect(failure).toBeDefined();
    const err = failure!.err as { message: string; stack: string };
    // The statement is there to diagnose, with placeholders where the values were.
    expect(err.message).toMatch(/insert into .webhook_endpoints. \(.*\) values \(\?(, \?)+\)/);
    const everything = JSON.stringify(lines);
    expect(everything).not.toContain(marker);
    expect(everything).not.toContain('whsec_');
    expect(everything).not.toContain(KEYS.baltic);
  });
});
