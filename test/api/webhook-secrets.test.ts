import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { cli } from '../support/cli-runner.js';
import { DIRS } from '../support/test-fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Issue 28, points 2 and 5: webhook secrets encrypted at rest (the embedded profile with its own key in DATA_DIR, the
 * production one with SECRETS_ENCRYPTION_KEYS, API and worker alike), the upgrade of plain secrets by
 * `webhooks:reencrypt`, private targets allowed for one directory by the CLI (not by WEBHOOK_ALLOW_PRIVATE_TARGETS),
 * and delivery errors that tell the client a coarse reason while the operator's CLI shows the detail.
 */
const KEY = `prod-1:${Buffer.alloc(32, 7).toString('base64')}`;
const IP_OR_PORT = /\b\d{1,3}(\.\d{1,3}){3}\b|:\d{2,5}\b|\[[0-9a-f:]+\]|ECONN|refused: address/i;

let api: TestApi;
let receiver: WebhookReceiver;
let cliEnv: Record<string, string>;
/** The API's log (it delivers in the embedded profile; a worker process does in production). */
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  api = await startTestApi(
    {
      EVENTS_PUBLISH_INTERVAL_MS: '50',
      WEBHOOK_RETRY_SCHEDULE: '3600',
      WEBHOOK_TIMEOUT_MS: '2000',
      // The production profile is given a key (the API and the worker both read it); the embedded one makes its own.
      ...(PROFILE === 'production' ? { SECRETS_ENCRYPTION_KEYS: KEY } : {}),
    },
    { label: 'hook-secrets', logLines },
  );
  receiver = await WebhookReceiver.start();
  cliEnv = { DATA_DIR: api.dataDir, ...(api.config.databaseUrl ? { DATABASE_URL: api.config.databaseUrl, SECRETS_ENCRYPTION_KEYS: KEY } : {}) };
  const allowed = await cli(['webhooks:allow-private', '--directory', DIRS.baltic], cliEnv);
  expect(allowed.code, allowed.stderr).toBe(0);
});

afterAll(async () => {
  await api?.stop();
  await receiver?.stop();
});

afterEach(async () => {
  receiver.behaviour = 'ok';
  await api.knex('webhook_deliveries').delete();
  await api.knex('webhook_endpoints').delete();
});

function create(url: string, as: 'baltic' | 'alpine' = 'baltic') {
  return api.call('/webhook-endpoints', {
    method: 'POST',
    as,
    body: JSON.stringify({ url, event_types: ['invoice.updated'] }),
    headers: { 'Content-Type': 'application/json' },
  });
}

let nextBranch = 500;
async function touchInvoice(id: number): Promise<void> {
  nextBranch += 1;
  await api.knex('invoices').where({ id }).update({ branch_id: nextBranch });
}

/** The endpoint's first attempt once it failed (its retry, an hour later, is pending meanwhile). */
async function failedAttempt(endpointId: number, as: 'baltic' | 'alpine' = 'baltic'): Promise<Record<string, unknown>> {
  const read = async () =>
    ((await envelopeOf(await api.call(`/webhook-endpoints/${endpointId}/deliveries`, { as }))).data.deliveries as Array<Record<string, unknown>>).find(
      (attempt) => attempt.attempt === 1,
    );
  await expect.poll(async () => (await read())?.status, { timeout: 15_000, interval: 50 }).toBe('failed');
  return (await read())!;
}

/** An endpoint row as a release before encryption wrote it: the secret in plain text. */
async function plainEndpoint(directory: string, url: string, secret: string): Promise<number> {
  const [id] = await api.knex('webhook_endpoints').insert({
    directory,
    url,
    event_types: JSON.stringify(['invoice.updated']),
    description: null,
    enabled: 1,
    disabled_reason: null,
    secret,
    created: Math.floor(Date.now() / 1000),
  });
  return Number(id);
}

describe(`webhook secrets at rest (${PROFILE})`, () => {
  it('when an endpoint is created and rotated, then the database holds its secrets only encrypted, naming the key, and deliveries verify with both', async () => {
    const created = await envelopeOf(await create(receiver.url));
    expect(created.status).toBe(201);
    const secret = created.data.secret as string;
    const keyId = PROFILE === 'production' ? 'prod-1' : 'local-[0-9a-f]{8}';
    const stored = async () =>
      (await api.knex('webhook_endpoints').select('secret', 'previous_secret').where({ id: created.data.id }).first()) as Record<string, string | null>;
    expect((await stored()).secret).toMatch(new RegExp(`^v1:${keyId}:[A-Za-z0-9+/]+=*$`));
    expect((await stored()).secret).not.toContain(secret.slice(6));
    const rotated = (await envelopeOf(await api.call(`/webhook-endpoints/${created.data.id}/rotate-secret`, { method: 'POST' }))).data.secret as string;
    const after = await stored();
    for (const value of [after.secret!, after.previous_secret!]) {
      expect(value).toMatch(new RegExp(`^v1:${keyId}:`));
      for (const plain of [secret, rotated]) expect(value).not.toContain(plain.slice(6));
    }
    const before = receiver.requests.length;
    await touchInvoice(9001);
    await receiver.waitFor(before + 1);
    const request = receiver.requests[before]!;
    const [first, second] = String(request.headers['webhook-signature']).split(' ');
    expect(WebhookReceiver.verify({ ...request, headers: { ...request.headers, 'webhook-signature': first! } }, rotated).type).toBe('invoice.updated');
    expect(WebhookReceiver.verify({ ...request, headers: { ...request.headers, 'webhook-signature': second! } }, secret).type).toBe('invoice.updated');
  });

  it('when a database from before encryption holds plain secrets, then they still sign; webhooks:reencrypt encrypts them (idempotent) and they still sign', async () => {
    const secret = `whsec_${Buffer.alloc(24, 3).toString('base64')}`;
    const id = await plainEndpoint(DIRS.baltic, receiver.url, secret);
    let before = receiver.requests.length;
    await touchInvoice(9001);
    await receiver.waitFor(before + 1);
    expect(WebhookReceiver.verify(receiver.requests[before]!, secret).type).toBe('invoice.updated');

    const run = await cli(['webhooks:reencrypt'], cliEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Re-encrypted 1 webhook secret with key "[^"]+" \(1 were plain text\) across 1 endpoint; 0 changed meanwhile/);
    const stored = (await api.knex('webhook_endpoints').select('secret').where({ id }).first()) as { secret: string };
    expect(stored.secret).toMatch(/^v1:/);
    expect(stored.secret).not.toContain(secret.slice(6));
    const again = await cli(['webhooks:reencrypt'], cliEnv);
    expect(again.stdout).toMatch(/^Re-encrypted 0 webhook secrets .* across 1 endpoint;/);

    before = receiver.requests.length;
    await touchInvoice(9001);
    await receiver.waitFor(before + 1);
    expect(WebhookReceiver.verify(receiver.requests[before]!, secret).type).toBe('invoice.updated');
  });
});

describe(`private webhook targets per directory (${PROFILE})`, () => {
  it('when the operator allowed one directory, then its http://127.0.0.1 endpoint is accepted and delivered to; another directory gets 422 on url', async () => {
    const allowed = await envelopeOf(await create(receiver.url, 'baltic'));
    expect(allowed.status).toBe(201);
    const refused = await envelopeOf(await create(receiver.url, 'alpine'));
    expect(refused).toMatchObject({ status: 422, errors: { url: ['The url must be an https URL.'] } });
    expect((await envelopeOf(await create('https://127.0.0.1/x', 'alpine'))).errors).toEqual({
      url: ['The url must not point to a private, loopback or link-local address.'],
    });
    const before = receiver.requests.length;
    await touchInvoice(9001);
    await receiver.waitFor(before + 1);
    expect(WebhookReceiver.verify(receiver.requests[before]!, allowed.data.secret as string).type).toBe('invoice.updated');
    const listed = await cli(['webhooks:private-targets'], cliEnv);
    expect(listed.stdout.split('\n')[1]).toMatch(new RegExp(`^${DIRS.baltic} +\\d{4}-`));
  });

  it("when a directory not allowed has an endpoint at a private address (stored earlier, or a name that now resolves there), then its delivery is refused and the client's error names no address; the operator's CLI does", async () => {
    const port = new URL(receiver.url).port;
    const id = await plainEndpoint(DIRS.alpine, `https://127.0.0.1:${port}/alpine`, `whsec_${Buffer.alloc(24, 4).toString('base64')}`);
    const before = receiver.requests.length;
    await touchInvoice(9101);
    const attempt = await failedAttempt(id, 'alpine');
    expect(attempt).toMatchObject({ status: 'failed', response_status: null, error: 'refused: private address' });
    expect(String(attempt.error)).not.toMatch(IP_OR_PORT);
    expect(receiver.requests.length).toBe(before);
    const operator = await cli(['webhooks:deliveries', '--endpoint', String(id)], cliEnv);
    expect(operator.stdout).toContain('refused: private address');
    expect(operator.stdout).toContain('refused: address 127.0.0.1 is not public');
  });

  it("when the operator withdraws a directory's permission, then its endpoint at a private address is refused at the next delivery", async () => {
    const created = await envelopeOf(await create(receiver.url, 'baltic'));
    expect(created.status).toBe(201);
    const denied = await cli(['webhooks:deny-private', '--directory', DIRS.baltic], cliEnv);
    expect(denied.code, denied.stderr).toBe(0);
    try {
      const before = receiver.requests.length;
      await touchInvoice(9001);
      const attempt = await failedAttempt(created.data.id as number);
      // http is refused before any DNS or connection once the directory may no longer use private targets.
      expect(attempt).toMatchObject({ status: 'failed', error: 'refused: not an https URL' });
      expect(receiver.requests.length).toBe(before);
    } finally {
      expect((await cli(['webhooks:allow-private', '--directory', DIRS.baltic], cliEnv)).code).toBe(0);
    }
  });
});

describe(`delivery errors shown to clients (${PROFILE})`, () => {
  it('when nothing listens at the target, then the client is told "connection failed" with no address or port; the operator sees "connection refused"', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const created = await envelopeOf(await create(`http://127.0.0.1:${port}/hook`));
    expect(created.status).toBe(201);
    await touchInvoice(9001);
    const attempt = await failedAttempt(created.data.id as number);
    expect(attempt).toMatchObject({ status: 'failed', response_status: null, error: 'connection failed' });
    expect(JSON.stringify(attempt)).not.toContain(String(port));
    const operator = await cli(['webhooks:deliveries', '--endpoint', String(created.data.id)], cliEnv);
    expect(operator.stdout).toMatch(/connection failed +connection refused/);
    if (PROFILE === 'embedded')
      expect(logLines).toContainEqual(
        expect.objectContaining({ msg: 'webhook attempt failed', endpointId: created.data.id, error: 'connection failed', detail: 'connection refused' }),
      );
  });

  it('when the receiver answers 500, then the client is told "answered 500"', async () => {
    const created = await envelopeOf(await create(receiver.url));
    receiver.behaviour = 'fail';
    await touchInvoice(9001);
    const attempt = await failedAttempt(created.data.id as number);
    expect(attempt).toMatchObject({ status: 'failed', response_status: 500, error: 'answered 500' });
  });
});
