import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient, type RetryEvent } from '@logi/client';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { sdkFor } from '../support/sdk-client.js';

// One request per client directory per 2 seconds: the second is 429, with Retry-After 1 or 2.
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_SECONDS: '2' }, { label: 'sdk-retry', worker: false });
  // A first request warms the server (counted per IP, as it has no credentials), so each window below holds both calls.
  expect((await fetch(`${api.base}/orders/file-categories`)).status).toBe(401);
});
afterAll(async () => {
  await api?.stop();
});

async function rejectionOf(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('the SDK when rate limited', () => {
  it('when retry is not asked, then a 429 is an ApiError with Retry-After; a Retry-After over the bound is not waited for either', async () => {
    const sdk = sdkFor(api, 'baltic');
    expect(await sdk.orders.fileCategories()).toHaveLength(3);
    const limited = await rejectionOf(sdk.orders.fileCategories());
    expect(limited).toMatchObject({ status: 429, message: 'Too Many Attempts.', errors: {} });
    expect([1, 2]).toContain(limited.retryAfterSeconds);
    const events: RetryEvent[] = [];
    const impatient = sdkFor(api, 'baltic', { retry: { attempts: 5, maxWaitSeconds: 0, onRetry: (event) => events.push(event) } });
    expect(await rejectionOf(impatient.orders.fileCategories())).toMatchObject({ status: 429, retryAfterSeconds: expect.any(Number) });
    expect(events).toEqual([]);
    expect(impatient.urls).toHaveLength(1);
  });

  it('when retry is asked, then after a 429 the call waits what Retry-After says and succeeds', async () => {
    const events: RetryEvent[] = [];
    const sdk = sdkFor(api, 'alpine', { retry: { attempts: 2, onRetry: (event) => events.push(event) } });
    expect(await sdk.orders.fileCategories()).toHaveLength(3);
    const started = performance.now();
    expect(await sdk.orders.fileCategories()).toHaveLength(3);
    expect(events).toEqual([{ status: 429, attempt: 1, waitSeconds: expect.any(Number), url: `${api.base}/orders/file-categories` }]);
    expect([1, 2]).toContain(events[0]!.waitSeconds);
    // Timers may fire a hair early by performance.now()'s clock.
    expect(performance.now() - started).toBeGreaterThanOrEqual(events[0]!.waitSeconds * 1000 - 20);
    expect(sdk.urls).toHaveLength(3);
  });
});

describe('the SDK retry on 503', () => {
  it('when an upload is answered 503, then the same files are sent again after Retry-After, and the attempts are bounded', async () => {
    const received: string[][] = [];
    const events: RetryEvent[] = [];
    const unavailable: typeof fetch = async (input, init) => {
      const form = await new Request(input, init).formData();
      received.push(form.getAll('files').map((file) => `${(file as File).name}:${(file as File).size}`));
      return Response.json({ status: 503, message: 'Service Unavailable', data: null }, { status: 503, headers: { 'Retry-After': '0' } });
    };
    const sdk = createClient({
      baseUrl: 'http://sdk.test/v1',
      token: 'key',
      clientDirectory: 'dir',
      fetch: unavailable,
      retry: { attempts: 3, onRetry: (e) => events.push(e) },
    });
    const error = await rejectionOf(sdk.orders.uploadFiles(3001, [{ name: 'a.pdf', content: Buffer.from('%PDF-1.4 a') }], { idempotencyKey: 'k-1' }));
    expect(error).toMatchObject({ status: 503, message: 'Service Unavailable', retryAfterSeconds: 0 });
    expect(received).toEqual([['a.pdf:10'], ['a.pdf:10'], ['a.pdf:10']]);
    expect(events.map((e) => [e.status, e.attempt, e.waitSeconds])).toEqual([
      [503, 1, 0],
      [503, 2, 0],
    ]);
  });
});
