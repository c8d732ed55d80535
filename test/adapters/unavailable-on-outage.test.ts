import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '@logi/domain';
import { unavailableOnOutage } from '@logi/adapters';

const coded = (code: string) => Object.assign(new Error(`${code}: from the driver`), { code });

/** An adapter as the roots bind them: private state, methods calling each other, sync and async results. */
class FakeRepository {
  #calls = 0;
  failure: Error | null = null;

  async find(id: number): Promise<{ id: number; calls: number }> {
    this.#calls += 1;
    if (this.failure) throw this.failure;
    return { id, calls: this.#calls };
  }

  async findTwice(id: number): Promise<number> {
    await this.find(id);
    return (await this.find(id)).calls;
  }

  close(): string {
    if (this.failure) throw this.failure;
    return 'closed';
  }
}

describe('unavailableOnOutage', () => {
  it('when the adapter answers, then the port answers the same, private state and inner calls included', async () => {
    const port = unavailableOnOutage(new FakeRepository(), 'database');
    expect(await port.find(7)).toEqual({ id: 7, calls: 1 });
    expect(await port.findTwice(7)).toBe(3);
    expect(port.close()).toBe('closed');
    expect(port).toBeInstanceOf(FakeRepository);
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compares the method's identity (one wrapper per method), calls nothing
    expect(port.find).toBe(port.find);
  });

  it('when a method fails with a transient fault, then the port raises ServiceUnavailableError with the fault as cause', async () => {
    const adapter = new FakeRepository();
    const port = unavailableOnOutage(adapter, 'database');
    const fault = coded('ECONNREFUSED');
    adapter.failure = fault;
    const error = await port.find(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({ reason: 'database unavailable', retryAfterSeconds: 5, cause: fault });
    expect(() => port.close()).toThrow(ServiceUnavailableError);
  });

  it('when a method fails otherwise, then the error passes as it was; a ServiceUnavailableError is not wrapped again', async () => {
    const adapter = new FakeRepository();
    const port = unavailableOnOutage(adapter, 'file storage');
    for (const failure of [coded('ER_DUP_ENTRY'), new Error('a bug'), new ServiceUnavailableError('queue down', 1)]) {
      adapter.failure = failure;
      expect(await port.find(1).catch((e: unknown) => e)).toBe(failure);
    }
  });
});
