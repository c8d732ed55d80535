import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError, listenConfigError, loadConfig } from '@logi/config';

/** The error a real listener gives, so the mapping is checked against what Node actually reports. */
function listenFailure(port: number, host: string): Promise<Error> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', resolve);
    server.listen(port, host, () => server.close(() => resolve(new Error('listened after all'))));
  });
}

describe('ports and hosts', () => {
  it.each([
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['METRICS_PORT', '70000'],
    ['METRICS_PORT', '1.5'],
  ])('when %s is %j, then the error names it', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(new ConfigError(variable, `must be a port number from 0 to 65535 (got "${value}")`));
  });

  it('when PORT and METRICS_PORT are 0 or 65535, then they are accepted', () => {
    expect(loadConfig({ PORT: '0', METRICS_PORT: '0' })).toMatchObject({ port: 0, metrics: { port: 0 } });
    expect(loadConfig({ PORT: '65535', METRICS_PORT: '65535' })).toMatchObject({ port: 65535, metrics: { port: 65535 } });
  });

  it('when the API host does not resolve or is not on this machine, then HOST is named', async () => {
    const config = loadConfig({ HOST: 'no.such.host.invalid', PORT: '0' });
    expect(listenConfigError(await listenFailure(0, config.host), config)?.message).toMatch(
      /^Configuration error: HOST "no\.such\.host\.invalid" cannot be listened on/,
    );
    const far = loadConfig({ HOST: '203.0.113.1', PORT: '0' });
    expect(listenConfigError(await listenFailure(0, far.host), far)?.message).toMatch(
      /^Configuration error: HOST "203\.0\.113\.1" cannot be listened on: it is not an address of this machine/,
    );
  });

  it('when the metrics port is taken, then METRICS_PORT is named, in the API and in the worker', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const config = loadConfig({ PORT: '0', METRICS_PORT: String(port) });
      const failure = new Error('metrics could not start', { cause: await listenFailure(port, '127.0.0.1') });
      expect(listenConfigError(failure, config)?.message).toContain(`METRICS_PORT ${port} on 127.0.0.1 is already in use`);
      expect(listenConfigError(failure, config, false)?.message).toContain('METRICS_PORT');
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it("when PORT and METRICS_PORT are the same number, then the listener that failed is named: the API tags its metrics listener's error", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const config = loadConfig({ PORT: String(port), METRICS_PORT: String(port) });
      const cause = await listenFailure(port, '127.0.0.1');
      const metricsFailure = Object.assign(new Error('metrics listener could not start', { cause }), { listener: 'metrics' });
      expect(listenConfigError(metricsFailure, config)?.message).toMatch(/^Configuration error: METRICS_PORT /);
      expect(listenConfigError(cause, config)?.message).toMatch(/^Configuration error: PORT /);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('when the dashboard is configured, then it has its own listener (127.0.0.1:9466) and is read-only unless DASHBOARD_WRITE; DASHBOARD_PORT=0 turns it off', () => {
    const creds = { DASHBOARD_USER: 'ops', DASHBOARD_PASSWORD: 'secret' };
    expect(loadConfig(creds).dashboard).toEqual({ user: 'ops', password: 'secret', host: '127.0.0.1', port: 9466, write: false });
    expect(loadConfig({ ...creds, DASHBOARD_HOST: '0.0.0.0', DASHBOARD_PORT: '9500', DASHBOARD_WRITE: 'true' }).dashboard).toMatchObject({
      host: '0.0.0.0',
      port: 9500,
      write: true,
    });
    expect(loadConfig({ ...creds, DASHBOARD_WRITE: '0' }).dashboard?.write).toBe(false);
    expect(loadConfig({ ...creds, DASHBOARD_PORT: '0' }).dashboard).toBeNull();
    expect(loadConfig({}).dashboard).toBeNull();
    expect(() => loadConfig({ ...creds, DASHBOARD_PORT: '70000' })).toThrow(
      new ConfigError('DASHBOARD_PORT', 'must be a port number from 0 to 65535 (got "70000")'),
    );
    expect(() => loadConfig({ ...creds, DASHBOARD_WRITE: 'yes' })).toThrow(/^Configuration error: DASHBOARD_WRITE /);
  });

  it("when the dashboard's port is taken, then the API's error names DASHBOARD_PORT", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const config = loadConfig({ PORT: '0', METRICS_PORT: String(port), DASHBOARD_USER: 'ops', DASHBOARD_PASSWORD: 'x', DASHBOARD_PORT: String(port) });
      const cause = await listenFailure(port, '127.0.0.1');
      const failure = Object.assign(new Error('queue dashboard listener could not start', { cause }), { listener: 'dashboard' });
      expect(listenConfigError(failure, config)?.message).toMatch(new RegExp(`^Configuration error: DASHBOARD_PORT ${port} on 127.0.0.1 is already in use`));
      expect(listenConfigError(Object.assign(new Error('metrics', { cause }), { listener: 'metrics' }), config)?.message).toMatch(
        /^Configuration error: METRICS_PORT /,
      );
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('when an error is not about listening, then it is left alone', () => {
    const config = loadConfig({});
    expect(listenConfigError(new Error('boom'), config)).toBeNull();
    expect(listenConfigError(Object.assign(new Error('spawn'), { code: 'EACCES', syscall: 'spawn' }), config, false)).toBeNull();
  });

  it("when DOCS_BASE_URL is an http(s) address, then it is the guides' base; otherwise the error names it", () => {
    expect(loadConfig({}).docsBaseUrl).toBeNull();
    expect(loadConfig({ DOCS_BASE_URL: 'https://git.example.com/logi/-/blob/main' }).docsBaseUrl).toBe('https://git.example.com/logi/-/blob/main');
    expect(() => loadConfig({ DOCS_BASE_URL: 'git.example.com/logi' })).toThrow(
      /^Configuration error: DOCS_BASE_URL is invalid: must be an http:\/\/ or https:\/\/ address/,
    );
  });
});
