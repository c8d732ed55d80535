import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@logi/config';

describe('TRUST_PROXY', () => {
  it.each([
    ['false', 0],
    ['true', 1],
    ['0', 0],
    ['1', 1],
    ['2', 2],
    ['3', 3],
  ])('when it is %j, then the API trusts %i proxy hops', (value, hops) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxyHops).toBe(hops);
  });

  it('when it is unset, then no proxy is trusted', () => {
    expect(loadConfig({}).trustProxyHops).toBe(0);
  });

  it.each(['-1', '1.5', 'yes', 'two'])('when it is %j, then the error names it', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(
      new ConfigError('TRUST_PROXY', `must be the number of trusted proxy hops, a whole number >= 0, or true (1) or false (0) (got "${value}")`),
    );
  });
});

describe('EVENTS_MAX_WAITING', () => {
  it('when it is unset, then 5 long polls may wait; when set, then that many', () => {
    expect(loadConfig({}).eventsMaxWaiting).toBe(5);
    expect(loadConfig({ EVENTS_MAX_WAITING: '1' }).eventsMaxWaiting).toBe(1);
    expect(loadConfig({ EVENTS_MAX_WAITING: '40' }).eventsMaxWaiting).toBe(40);
  });

  it.each(['0', '-2', '2.5', 'many'])('when it is %j, then the error names it', (value) => {
    expect(() => loadConfig({ EVENTS_MAX_WAITING: value })).toThrow(new ConfigError('EVENTS_MAX_WAITING', `must be a whole number >= 1 (got "${value}")`));
  });
});

describe('UPLOAD_QUOTA_MB_PER_DAY', () => {
  it('when it is unset or 0, then there is no quota; when set, then it is that many MiB in bytes', () => {
    expect(loadConfig({}).uploadQuotaBytesPerDay).toBe(0);
    expect(loadConfig({ UPLOAD_QUOTA_MB_PER_DAY: '0' }).uploadQuotaBytesPerDay).toBe(0);
    expect(loadConfig({ UPLOAD_QUOTA_MB_PER_DAY: '3' }).uploadQuotaBytesPerDay).toBe(3 * 1_048_576);
  });

  it.each(['-1', '0.5', 'lots'])('when it is %j, then the error names it', (value) => {
    expect(() => loadConfig({ UPLOAD_QUOTA_MB_PER_DAY: value })).toThrow(
      new ConfigError('UPLOAD_QUOTA_MB_PER_DAY', `must be a whole number >= 0 (got "${value}")`),
    );
  });
});

describe('EXPORT_MAX_INVOICES, EXPORT_MAX_ACTIVE, EXPORT_RETENTION_HOURS, EXPORT_LEASE_SECONDS, EXPORT_STORAGE_MB_PER_DIRECTORY', () => {
  it('when unset, then 10000 invoices, 2 active exports, 72 hours, a 30 s lease, 2048 MiB kept; when set, then those values', () => {
    expect(loadConfig({}).exports).toEqual({
      maxInvoices: 10_000,
      maxActive: 2,
      retentionHours: 72,
      leaseMs: 30_000,
      storageBytesPerDirectory: 2048 * 1024 * 1024,
    });
    expect(
      loadConfig({
        EXPORT_MAX_INVOICES: '500',
        EXPORT_MAX_ACTIVE: '5',
        EXPORT_RETENTION_HOURS: '1',
        EXPORT_LEASE_SECONDS: '2',
        EXPORT_STORAGE_MB_PER_DIRECTORY: '3',
      }).exports,
    ).toEqual({
      maxInvoices: 500,
      maxActive: 5,
      retentionHours: 1,
      leaseMs: 2_000,
      storageBytesPerDirectory: 3 * 1024 * 1024,
    });
  });

  it.each([
    ['EXPORT_MAX_INVOICES', '0', 1],
    ['EXPORT_MAX_ACTIVE', '1.5', 1],
    ['EXPORT_RETENTION_HOURS', 'soon', 1],
    ['EXPORT_LEASE_SECONDS', '1', 2],
    ['EXPORT_STORAGE_MB_PER_DIRECTORY', '0', 1],
    ['EXPORT_STORAGE_MB_PER_DIRECTORY', '1.5', 1],
  ])('when %s is %j, then the error names it', (name, value, min) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new ConfigError(name, `must be a whole number >= ${min} (got "${value}")`));
  });
});
