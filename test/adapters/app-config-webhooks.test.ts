import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseRetrySchedule } from '@logi/config';

describe('WEBHOOK_RETRY_SCHEDULE', () => {
  it.each([
    ['5,300,1800', [5, 300, 1800]],
    [' 1 , 2 ', [1, 2]],
    ['', null],
    ['5,,6', null],
    ['0,5', null],
    ['1.5', null],
    ['-1', null],
  ])('when it is %j, then it reads as %j', (value, expected) => {
    expect(parseRetrySchedule(value)).toEqual(expected);
  });

  it('when it is set, then the configuration holds its delays; when it is wrong, then the error names it', () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5, 60' }).webhooks.retryScheduleSeconds).toEqual([5, 60]);
    expect(loadConfig({}).webhooks.retryScheduleSeconds).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5,0' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5,0' })).toThrow(/^Configuration error: WEBHOOK_RETRY_SCHEDULE must be a comma-separated list/);
  });
});

describe('WEBHOOK_MAX_IN_FLIGHT_PER_DIRECTORY', () => {
  it('when it is unset, then a directory has 8 attempts in flight per process; set, its value; not a positive integer, the error names it', () => {
    expect(loadConfig({}).webhooks.maxInFlightPerDirectory).toBe(8);
    expect(loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_DIRECTORY: '3' }).webhooks.maxInFlightPerDirectory).toBe(3);
    expect(() => loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_DIRECTORY: '0' })).toThrow(/^Configuration error: WEBHOOK_MAX_IN_FLIGHT_PER_DIRECTORY /);
  });
});

describe('SECRETS_ENCRYPTION_KEYS', () => {
  const k1 = Buffer.alloc(32, 1).toString('base64');
  const k2 = Buffer.alloc(32, 2).toString('base64');

  it('when it is unset, then no key is configured; set, its keys in order (the first encrypts)', () => {
    expect(loadConfig({}).secretKeys).toEqual([]);
    expect(loadConfig({ SECRETS_ENCRYPTION_KEYS: `2026-11:${k2}, 2025-01:${k1}` }).secretKeys).toEqual([
      { id: '2026-11', key: Buffer.alloc(32, 2) },
      { id: '2025-01', key: Buffer.alloc(32, 1) },
    ]);
  });

  it.each([
    [`k1:${Buffer.alloc(16).toString('base64')}`, /entry 1 of 1 has a key of 16 bytes; AES-256 needs 32/],
    [`k1:${k1},k2`, /entry 2 of 2 must be <id>:<base64 of 32 bytes>/],
    [k1, /entry 1 of 1 must be <id>:<base64 of 32 bytes>/],
    [`k1:${k1},k1:${k2}`, /entry 2 of 2 repeats the key id "k1"/],
    [`bad id:${k1}`, /entry 1 of 1 must be/],
  ])('when it is %j, then the process stops with one line naming it and never the key', (value, problem) => {
    let error: unknown;
    try {
      loadConfig({ SECRETS_ENCRYPTION_KEYS: value });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/^Configuration error: SECRETS_ENCRYPTION_KEYS /);
    expect(message).toMatch(problem);
    expect(message.split('\n')).toHaveLength(1);
    expect(message).not.toContain(k1.slice(0, 20));
  });
});
