import { describe, expect, it } from 'vitest';
import { FairQueue } from '@logi/domain';

function takeAll<T>(queue: FairQueue<T>): T[] {
  const out: T[] = [];
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) out.push(item);
  return out;
}

describe('FairQueue (start-time fair queueing between directories)', () => {
  it('when one directory has a deep backlog, then a new item of another waits behind at most one item of each busy directory', () => {
    const queue = new FairQueue<string>();
    for (let i = 1; i <= 50; i++) queue.push('A', `A${i}`);
    for (let i = 1; i <= 50; i++) queue.push('B', `B${i}`);
    queue.push('C', 'C1');
    const order = takeAll(queue);
    expect(order.indexOf('C1')).toBe(2);
    // The two backlogs then alternate, each in its own order.
    expect(order.slice(0, 7)).toEqual(['A1', 'B1', 'C1', 'A2', 'B2', 'A3', 'B3']);
    expect(order.filter((item) => item.startsWith('A'))).toEqual(Array.from({ length: 50 }, (_, i) => `A${i + 1}`));
  });

  it('when a directory arrives while a backlog is being served, then it goes in at the current round, not behind the backlog', () => {
    const queue = new FairQueue<string>();
    for (let i = 1; i <= 20; i++) queue.push('A', `A${i}`);
    expect([queue.shift(), queue.shift(), queue.shift()]).toEqual(['A1', 'A2', 'A3']);
    queue.push('B', 'B1');
    queue.push('B', 'B2');
    expect([queue.shift(), queue.shift(), queue.shift(), queue.shift()]).toEqual(['B1', 'A4', 'B2', 'A5']);
  });

  it('when a directory with nothing waiting asks, then it goes before the queued items of busy directories that share its round', () => {
    const queue = new FairQueue<string>();
    for (let i = 1; i <= 5; i++) queue.push('A', `A${i}`);
    for (let i = 1; i <= 5; i++) queue.push('B', `B${i}`);
    expect([queue.shift(), queue.shift(), queue.shift()]).toEqual(['A1', 'B1', 'A2']);
    // B2 is of the round being served; C1 still goes first, then the rounds go on as before.
    queue.push('C', 'C1');
    expect(takeAll(queue)).toEqual(['C1', 'B2', 'A3', 'B3', 'A4', 'B4', 'A5', 'B5']);
  });

  it('when bulk items wait, then every interactive item leaves first, and bulk items are shared fairly among themselves', () => {
    const queue = new FairQueue<string>();
    for (let i = 1; i <= 5; i++) queue.push('A', `export-A${i}`, { bulk: true });
    for (let i = 1; i <= 3; i++) queue.push('B', `export-B${i}`, { bulk: true });
    queue.push('C', 'C1');
    queue.push('A', 'A1');
    expect(takeAll(queue)).toEqual(['C1', 'A1', 'export-A1', 'export-B1', 'export-A2', 'export-B2', 'export-A3', 'export-B3', 'export-A4', 'export-A5']);
  });

  it('when an item is removed or the queue drained, then it is not handed out and an emptied queue starts every directory even', () => {
    const queue = new FairQueue<string>();
    queue.push('A', 'A1');
    queue.push('A', 'A2');
    queue.push('B', 'B1');
    expect(queue.remove('A1')).toBe(true);
    expect(queue.remove('A1')).toBe(false);
    expect(queue.size).toBe(2);
    expect(queue.drain().sort()).toEqual(['A2', 'B1']);
    expect(queue.size).toBe(0);
    queue.push('B', 'B2');
    queue.push('A', 'A3');
    expect(takeAll(queue)).toEqual(['B2', 'A3']);
  });
});
