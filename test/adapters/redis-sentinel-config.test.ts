import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@logi/config';

describe('Redis endpoint from the environment', () => {
  it('when neither REDIS_URL nor REDIS_SENTINELS is set, then there is no Redis (embedded profile)', () => {
    expect(loadConfig({}).redis).toBeNull();
  });

  it('when only REDIS_URL is set, then Redis is that one server', () => {
    expect(loadConfig({ REDIS_URL: 'redis://cache:6380/2' }).redis).toEqual({ url: 'redis://cache:6380/2' });
  });

  it('when REDIS_SENTINELS and REDIS_SENTINEL_NAME are set, then Redis is that master group, asked of each sentinel in turn', () => {
    const config = loadConfig({ REDIS_SENTINELS: 'sentinel-a:26379, sentinel-b:26380,10.0.0.3,[::1]:5000', REDIS_SENTINEL_NAME: 'logistics' });
    expect(config.redis).toEqual({
      sentinels: [
        { host: 'sentinel-a', port: 26379 },
        { host: 'sentinel-b', port: 26380 },
        // Sentinel's default port when none is given.
        { host: '10.0.0.3', port: 26379 },
        { host: '::1', port: 5000 },
      ],
      name: 'logistics',
      url: null,
    });
  });

  it('when REDIS_URL is set beside REDIS_SENTINELS, then it is kept for credentials, database and TLS', () => {
    const config = loadConfig({ REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_NAME: 'm', REDIS_URL: 'rediss://app:secret@ignored:6379/3' });
    expect(config.redis).toEqual({ sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'm', url: 'rediss://app:secret@ignored:6379/3' });
  });

  it('when REDIS_SENTINELS is set without REDIS_SENTINEL_NAME, then the error names REDIS_SENTINEL_NAME', () => {
    expect(() => loadConfig({ REDIS_SENTINELS: '127.0.0.1:26379' })).toThrow(
      new ConfigError(
        'REDIS_SENTINEL_NAME',
        'must be set when REDIS_SENTINELS is set: the name of the master group the sentinels monitor ("sentinel monitor <name> ...")',
      ),
    );
    // An empty variable counts as unset.
    expect(() => loadConfig({ REDIS_SENTINELS: '127.0.0.1:26379', REDIS_SENTINEL_NAME: ' ' })).toThrow(/^Configuration error: REDIS_SENTINEL_NAME must be set/);
  });

  it('when REDIS_SENTINEL_NAME is set without REDIS_SENTINELS, then the error names REDIS_SENTINELS', () => {
    expect(() => loadConfig({ REDIS_SENTINEL_NAME: 'm', REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(
      /^Configuration error: REDIS_SENTINELS must be set too/,
    );
  });

  it.each([
    ['127.0.0.1:26379,,127.0.0.1:26380', 'with no empty entry'],
    ['127.0.0.1:0', '"127.0.0.1:0"'],
    ['127.0.0.1:65536', '"127.0.0.1:65536"'],
    ['127.0.0.1:port', '"127.0.0.1:port"'],
    ['redis://127.0.0.1:26379', '"redis://127.0.0.1:26379"'],
    ['::1:26379', '"::1:26379"'],
  ])('when REDIS_SENTINELS is %j, then the error names REDIS_SENTINELS and the entry', (value, named) => {
    let error: unknown;
    try {
      loadConfig({ REDIS_SENTINELS: value, REDIS_SENTINEL_NAME: 'm' });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^Configuration error: REDIS_SENTINELS must be a comma-separated list of host:port/);
    expect((error as Error).message).toContain(named);
  });

  it('when REDIS_SENTINEL_NAME holds a space, then the error names it', () => {
    expect(() => loadConfig({ REDIS_SENTINELS: '127.0.0.1', REDIS_SENTINEL_NAME: 'my master' })).toThrow(
      /^Configuration error: REDIS_SENTINEL_NAME is invalid: must be 1-128 letters/,
    );
  });
});
