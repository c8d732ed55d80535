import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startMetricsServer, type HealthProbe, type MetricsListener } from '@logi/adapters';
import { freePort } from '../support/free-port.js';

/** The worker answers its health probes on its metrics listener: it has no HTTP port of its own. */
describe('the metrics listener', () => {
  const logger = pino({ level: 'silent' });
  const metrics = { registry: { metrics: async () => '# no series\n', contentType: 'text/plain; version=0.0.4' } } as unknown as Parameters<
    typeof startMetricsServer
  >[0];
  let listener: MetricsListener | null = null;
  afterEach(async () => {
    await listener?.stop();
    listener = null;
  });
  const start = async (health?: HealthProbe) => {
    listener = await startMetricsServer(metrics, { host: '127.0.0.1', port: await freePort() }, logger, health);
    return listener!;
  };
  const get = async (path: string) => {
    const response = await fetch(new URL(path, listener!.url));
    return { status: response.status, cache: response.headers.get('cache-control'), body: await response.text() };
  };

  it('when given a health probe, then /health/live is 200 at once and /health/ready follows the probe: 503 while starting or stopping, 200 when ready', async () => {
    let ready = false;
    await start({ ready: () => ready });
    const live = await get('/health/live');
    expect(live).toMatchObject({ status: 200, cache: 'no-store' });
    expect(JSON.parse(live.body)).toEqual({ status: 200, message: 'OK', data: { status: 'live', uptime_seconds: expect.any(Number) } });
    const starting = await get('/health/ready');
    expect(starting.status).toBe(503);
    expect(JSON.parse(starting.body)).toEqual({ status: 503, message: 'Service Unavailable', data: { status: 'not ready' } });
    ready = true;
    expect(JSON.parse((await get('/health/ready')).body)).toEqual({ status: 200, message: 'OK', data: { status: 'ready' } });
    ready = false;
    expect((await get('/health/ready')).status).toBe(503);
    // Metrics are served as before.
    expect((await get('/metrics')).status).toBe(200);
  });

  it('when the probe says the process cannot make progress (a worker that takes no jobs), then /health/live is 503 not live, and 200 again once it can', async () => {
    let live = false;
    await start({ ready: () => true, live: () => live });
    const dead = await get('/health/live');
    expect(dead).toMatchObject({ status: 503, cache: 'no-store' });
    expect(JSON.parse(dead.body)).toEqual({ status: 503, message: 'Service Unavailable', data: { status: 'not live' } });
    live = true;
    expect((await get('/health/live')).status).toBe(200);
  });

  it('when given no health probe (the API, whose probes are on its own port), then /health/live and /health/ready are 404', async () => {
    await start();
    expect((await get('/health/live')).status).toBe(404);
    expect((await get('/health/ready')).status).toBe(404);
  });
});
