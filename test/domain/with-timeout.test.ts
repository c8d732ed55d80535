import { describe, expect, it } from 'vitest';
import { TimeoutError, withTimeout } from '@logi/domain';

const never = new Promise<never>(() => undefined);

describe('withTimeout', () => {
  it('when the work settles first, then the race ends with its value or its error', async () => {
    await expect(withTimeout(Promise.resolve(7), 1_000)).resolves.toBe(7);
    await expect(withTimeout(async () => Promise.reject(new RangeError('bad')), 1_000)).rejects.toThrow(RangeError);
  });

  it('when the work throws synchronously, then the race rejects with that error instead of throwing', async () => {
    const race = withTimeout(() => {
      throw new RangeError('at once');
    }, 1_000);
    await expect(race).rejects.toThrow('at once');
  });

  it('when the time runs out, then it rejects with a TimeoutError naming the limit', async () => {
    const error = await withTimeout(never, 20).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).ms).toBe(20);
    expect((error as Error).message).toBe('did not finish within 20 ms');
  });

  it('when onTimeout returns a value, then the race resolves with it; when it throws, then the race rejects with that', async () => {
    await expect(withTimeout(never, 10, { onTimeout: () => 'late' as const })).resolves.toBe('late');
    await expect(
      withTimeout(never, 10, {
        onTimeout: () => {
          throw new RangeError('custom');
        },
      }),
    ).rejects.toThrow(RangeError);
  });

  it('when the signal aborts, then the race rejects with its reason before the deadline', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const race = withTimeout(never, 5_000, { signal: controller.signal });
    controller.abort(new RangeError('connection lost'));
    await expect(race).rejects.toThrow('connection lost');
    expect(Date.now() - started).toBeLessThan(1_000);
    const aborted = AbortSignal.abort(new RangeError('already'));
    await expect(withTimeout(never, 5_000, { signal: aborted })).rejects.toThrow('already');
  });

  it('when the race ends, then its timer is cleared and a late rejection of the work is not unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let fail!: (error: Error) => void;
      const work = new Promise<never>((_, reject) => (fail = reject));
      await expect(withTimeout(work, 10, { onTimeout: () => 'gave up' })).resolves.toBe('gave up');
      fail(new Error('too late'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
      const before = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
      await withTimeout(Promise.resolve(1), 60_000);
      expect(process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length).toBe(before);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
