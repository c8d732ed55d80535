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
