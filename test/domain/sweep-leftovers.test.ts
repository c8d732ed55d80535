import { describe, expect, it } from 'vitest';
import { SweepLeftoversUseCase } from '@logi/domain';
import { FakeStorage } from './fakes.js';

describe('sweep leftovers', () => {
  it('when staged uploads and PDFs are older than the age limit, then they go and nothing else does', async () => {
    const storage = new FakeStorage();
    storage.clock = () => 1_000;
    for (const key of ['staging/old', 'pdf/old.pdf', 'orders/d/1/kept']) storage.set(key, Buffer.from('x'));
    storage.clock = () => 9_000;
    for (const key of ['staging/young', 'pdf/young.pdf']) storage.set(key, Buffer.from('x'));
    const sweep = new SweepLeftoversUseCase({ storage, maxAgeMs: 5_000, now: () => 10_000 });
    expect(await sweep.execute()).toEqual({ deleted: { 'staging/': 1, 'pdf/': 1 } });
    expect([...storage.objects.keys()].sort()).toEqual(['orders/d/1/kept', 'pdf/young.pdf', 'staging/young']);
  });

  it('when there are more leftovers than one batch, then one run takes a batch and the next the rest', async () => {
    const storage = new FakeStorage();
    storage.clock = () => 0;
    for (let i = 0; i < 5; i++) storage.set(`staging/${i}`, Buffer.from('x'));
    const sweep = new SweepLeftoversUseCase({ storage, maxAgeMs: 1, batch: 3, now: () => 10 });
    expect((await sweep.execute()).deleted['staging/']).toBe(3);
    expect((await sweep.execute()).deleted['staging/']).toBe(2);
    expect(storage.objects.size).toBe(0);
  });
});
