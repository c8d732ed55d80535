import { describe, expect, it } from 'vitest';
import { HttpError } from '../../packages/api/src/http/http-error.js';
import { loginThrottle } from '../../packages/api/src/ops/dashboard/login-throttle.middleware.js';

/**
 * The dashboard's login throttle on a clock the test moves (the dashboard tests drive it over HTTP):
 * the window ends and the address may try again with a fresh count.
 */
function throttled(maxFailures: number, windowMs: number) {
  const clock = { now: 1_000_000 };
  const middleware = loginThrottle({ maxFailures, windowMs, now: () => clock.now });
  const attempt = async (ip: string, right: boolean): Promise<{ status: number; retryAfter?: string }> => {
    try {
      await middleware({ ip } as never, async () => {
        if (!right) throw new HttpError(401);
      });
      return { status: 200 };
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      return { status: error.status, ...(error.headers['Retry-After'] ? { retryAfter: error.headers['Retry-After'] } : {}) };
    }
  };
  return { clock, attempt, middleware };
}

describe('login throttle', () => {
  it('when the window of an address that hit the limit ends, then it may log in again, with a fresh count', async () => {
    const { clock, attempt } = throttled(3, 10_000);
    for (let i = 0; i < 3; i += 1) expect((await attempt('192.0.2.1', false)).status).toBe(401);
    clock.now += 4_000;
    expect(await attempt('192.0.2.1', true)).toEqual({ status: 429, retryAfter: '6' });
    expect((await attempt('192.0.2.9', true)).status).toBe(200);
    clock.now += 5_999;
    expect(await attempt('192.0.2.1', true)).toEqual({ status: 429, retryAfter: '1' });
    clock.now += 1;
    expect(await attempt('192.0.2.1', true)).toEqual({ status: 200 });
    for (let i = 0; i < 3; i += 1) expect((await attempt('192.0.2.1', false)).status).toBe(401);
    expect((await attempt('192.0.2.1', false)).status).toBe(429);
  });

  it('when logins succeed, then they count nothing; when failures stay below the limit, then the window passes without a 429', async () => {
    const { clock, attempt } = throttled(3, 10_000);
    for (let i = 0; i < 10; i += 1) expect((await attempt('192.0.2.2', true)).status).toBe(200);
    for (let i = 0; i < 2; i += 1) expect((await attempt('192.0.2.2', false)).status).toBe(401);
    expect((await attempt('192.0.2.2', true)).status).toBe(200);
    clock.now += 10_000;
    for (let i = 0; i < 2; i += 1) expect((await attempt('192.0.2.2', false)).status).toBe(401);
    expect((await attempt('192.0.2.2', true)).status).toBe(200);
  });

  it('when other errors than a failed login pass, then they count nothing', async () => {
    const { attempt, middleware } = throttled(1, 10_000);
    for (let i = 0; i < 3; i += 1) {
      await expect(
        middleware({ ip: '192.0.2.3' } as never, async () => {
          throw new HttpError(404);
        }),
      ).rejects.toMatchObject({ status: 404 });
    }
    expect((await attempt('192.0.2.3', true)).status).toBe(200);
    expect((await attempt('192.0.2.3', false)).status).toBe(401);
    expect((await attempt('192.0.2.3', true)).status).toBe(429);
  });
});
