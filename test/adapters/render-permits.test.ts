import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RenderPermits } from '@logi/adapters';

/** The renderer's pages between interactive and bulk renders (docs/contribute/decisions/0053-worker-pools.md). */
describe('RenderPermits', () => {
  const LONG = 60_000;

  it('when bulk renders queue on two pages with one reserved, then they hold one page and an interactive render takes the other at once', async () => {
    const permits = new RenderPermits(2, { reserved: 1 });
    expect(await permits.acquire(LONG, { bulk: true })).toBe(true);
    const order: string[] = [];
    const bulkWaiting = [1, 2, 3].map((i) => permits.acquire(LONG, { bulk: true }).then(() => order.push(`bulk${i}`)));
    expect(permits.state).toEqual({ held: 1, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 3 });
    // The reserved page: no wait.
    expect(await permits.acquire(LONG)).toBe(true);
    expect(permits.state).toEqual({ held: 2, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 3 });
    // An interactive render that comes while both pages are busy goes before every waiting bulk one.
    const interactive = permits.acquire(LONG).then(() => order.push('interactive'));
    permits.release({ bulk: true });
    await interactive;
    expect(order).toEqual(['interactive']);
    expect(permits.state).toEqual({ held: 2, bulkHeld: 0, waitingInteractive: 0, waitingBulk: 3 });
    // Interactive renders end: bulk ones go on, one page at a time, in their order.
    permits.release();
    await bulkWaiting[0];
    permits.release();
    expect(permits.state).toEqual({ held: 1, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 2 });
    permits.release({ bulk: true });
    await bulkWaiting[1];
    expect(order).toEqual(['interactive', 'bulk1', 'bulk2']);
    expect(permits.state).toEqual({ held: 1, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 1 });
  });

  it('when there is one page, then bulk renders may use it, and an interactive render waiting for it goes before the bulk backlog', async () => {
    const permits = new RenderPermits(1, { reserved: 1 });
    expect(await permits.acquire(LONG, { bulk: true })).toBe(true);
    const order: string[] = [];
    const bulk = permits.acquire(LONG, { bulk: true }).then(() => order.push('bulk'));
    const interactive = permits.acquire(LONG).then(() => order.push('interactive'));
    permits.release({ bulk: true });
    await interactive;
    permits.release();
    await bulk;
    expect(order).toEqual(['interactive', 'bulk']);
  });

  it('when nothing is reserved (a bulk-only worker), then bulk renders use every page', async () => {
    const permits = new RenderPermits(3);
    for (let i = 0; i < 3; i++) expect(await permits.acquire(LONG, { bulk: true })).toBe(true);
    expect(permits.state).toMatchObject({ held: 3, bulkHeld: 3 });
  });

  it('when a waiting render gives up, then it leaves the line and the page goes to the next one', async () => {
    const permits = new RenderPermits(2, { reserved: 1 });
    await permits.acquire(LONG, { bulk: true });
    await permits.acquire(LONG);
    expect(await permits.acquire(10)).toBe(false);
    expect(await permits.acquire(10, { bulk: true })).toBe(false);
    expect(permits.state).toEqual({ held: 2, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 0 });
    const next = permits.acquire(LONG, { bulk: true });
    permits.release({ bulk: true });
    expect(await next).toBe(true);
    expect(permits.state).toEqual({ held: 2, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 0 });
  });
  it('when renders of several ranks wait for a page, then a freed page goes to the lowest rank, interactive before bulk, first come among equals', async () => {
    const permits = new RenderPermits(1);
    expect(await permits.acquire(LONG, { rank: 1 })).toBe(true);
    const order: string[] = [];
    const wait = (name: string, options: { bulk?: boolean; rank?: number }) => permits.acquire(LONG, options).then((granted) => granted && order.push(name));
    // Fetched in this order (a worker takes more jobs than it has pages): a busy directory's later tags first, a bulk
    // job of the best bulk tag, then a newcomer's job whose fair tag is lower than theirs, then one of the same tag.
    const waiting = [
      wait('A-7', { rank: 7 }),
      wait('A-9', { rank: 9 }),
      wait('X-bulk', { bulk: true, rank: 2 ** 20 + 1 }),
      wait('B-4', { rank: 4 }),
      wait('C-4', { rank: 4 }),
    ];
    expect(permits.state).toEqual({ held: 1, bulkHeld: 0, waitingInteractive: 4, waitingBulk: 1 });
    for (let released = 1; released <= 5; released++) {
      permits.release({ bulk: order.at(-1) === 'X-bulk' });
      await vi.waitFor(() => expect(order).toHaveLength(released));
    }
    await Promise.all(waiting);
    expect(order).toEqual(['B-4', 'C-4', 'A-7', 'A-9', 'X-bulk']);
  });

  it('when renders come without a rank (the in-process queue), then they get pages first come', async () => {
    const permits = new RenderPermits(1);
    expect(await permits.acquire(LONG)).toBe(true);
    const order: number[] = [];
    const waiting = [1, 2, 3].map((i) => permits.acquire(LONG).then(() => order.push(i)));
    for (let released = 1; released <= 3; released++) {
      permits.release();
      await vi.waitFor(() => expect(order).toHaveLength(released));
    }
    await Promise.all(waiting);
    expect(order).toEqual([1, 2, 3]);
  });

  describe('when the reserve is kept only while clients render (reserveHoldMs, ADR 0059)', () => {
    beforeEach(() => vi.useFakeTimers());
    afterEach(() => vi.useRealTimers());

    it('when no interactive render came, then bulk renders hold every page; one that comes waits for the first page left, goes before the bulk backlog, and the reserve is kept again', async () => {
      const permits = new RenderPermits(2, { reserved: 1, reserveHoldMs: 10_000 });
      expect(await permits.acquire(LONG, { bulk: true })).toBe(true);
      expect(await permits.acquire(LONG, { bulk: true })).toBe(true);
      const backlog = [1, 2].map(() => permits.acquire(LONG, { bulk: true }));
      expect(permits.state).toEqual({ held: 2, bulkHeld: 2, waitingInteractive: 0, waitingBulk: 2 });
      const interactive = permits.acquire(LONG);
      expect(permits.state).toEqual({ held: 2, bulkHeld: 2, waitingInteractive: 1, waitingBulk: 2 });
      permits.release({ bulk: true });
      expect(await interactive).toBe(true);
      expect(permits.state).toEqual({ held: 2, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 2 });
      // The other bulk render ends: one of the backlog takes its page, and the client's page stays the client's.
      permits.release({ bulk: true });
      expect(await backlog[0]).toBe(true);
      expect(permits.state).toEqual({ held: 2, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 1 });
    });

    it('when the last interactive render ended reserveHoldMs ago, then the kept page goes to a waiting bulk render, and a client render within the hold starts it over', async () => {
      const permits = new RenderPermits(2, { reserved: 1, reserveHoldMs: 10_000 });
      expect(await permits.acquire(LONG)).toBe(true);
      expect(await permits.acquire(LONG, { bulk: true })).toBe(true);
      let granted = false;
      void permits.acquire(LONG, { bulk: true }).then((g) => (granted = g));
      permits.release();
      await vi.advanceTimersByTimeAsync(9_999);
      expect(granted).toBe(false);
      expect(permits.state).toEqual({ held: 1, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 1 });
      expect(await permits.acquire(LONG)).toBe(true);
      permits.release();
      await vi.advanceTimersByTimeAsync(9_999);
      expect(granted).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(granted).toBe(true);
      expect(permits.state).toEqual({ held: 2, bulkHeld: 2, waitingInteractive: 0, waitingBulk: 0 });
    });
  });

  describe('when bulk renders yield to interactive ones (bulkYield, ADR 0058)', () => {
    // Fake timers: the bounds are waited out by moving the clock, not by sleeping.
    beforeEach(() => vi.useFakeTimers());
    afterEach(() => vi.useRealTimers());

    it('when an interactive render holds a page, then a bulk render leaves the free page alone until the interactive one ends', async () => {
      const permits = new RenderPermits(2, { reserved: 1, bulkYield: { maxMs: LONG, quietMs: 0 } });
      expect(await permits.acquire(LONG)).toBe(true);
      const order: string[] = [];
      const bulk = permits.acquire(LONG, { bulk: true }).then((granted) => granted && order.push('bulk'));
      // A page is free and within the bulk bound, yet the bulk render waits: the interactive one gets the cores.
      expect(permits.state).toEqual({ held: 1, bulkHeld: 0, waitingInteractive: 0, waitingBulk: 1 });
      // Another interactive render takes the free page at once.
      expect(await permits.acquire(LONG)).toBe(true);
      permits.release();
      expect(permits.state).toEqual({ held: 1, bulkHeld: 0, waitingInteractive: 0, waitingBulk: 1 });
      permits.release();
      await bulk;
      expect(order).toEqual(['bulk']);
      expect(permits.state).toEqual({ held: 1, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 0 });
    });

    it('when the last interactive render ends, then every bulk render held back gets a page, up to the bulk bound', async () => {
      const permits = new RenderPermits(3, { reserved: 1, bulkYield: { maxMs: LONG, quietMs: 0 } });
      expect(await permits.acquire(LONG)).toBe(true);
      const bulk = [1, 2, 3].map(() => permits.acquire(LONG, { bulk: true }));
      expect(permits.state).toEqual({ held: 1, bulkHeld: 0, waitingInteractive: 0, waitingBulk: 3 });
      permits.release();
      expect(await Promise.all(bulk.slice(0, 2))).toEqual([true, true]);
      expect(permits.state).toEqual({ held: 2, bulkHeld: 2, waitingInteractive: 0, waitingBulk: 1 });
    });

    it('when interactive renders keep a page busy, then a bulk render that has yielded maxMs takes a free page anyway', async () => {
      const permits = new RenderPermits(2, { reserved: 1, bulkYield: { maxMs: 500, quietMs: 0 } });
      expect(await permits.acquire(LONG)).toBe(true);
      let granted: boolean | undefined;
      void permits.acquire(LONG, { bulk: true }).then((g) => (granted = g));
      await vi.advanceTimersByTimeAsync(499);
      expect(granted).toBeUndefined();
      expect(permits.state).toEqual({ held: 1, bulkHeld: 0, waitingInteractive: 0, waitingBulk: 1 });
      await vi.advanceTimersByTimeAsync(1);
      expect(granted).toBe(true);
      expect(permits.state).toEqual({ held: 2, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 0 });
    });

    it('when a bulk render that yielded finds no free page, then it takes the next one a render leaves, interactive waiters still first', async () => {
      const permits = new RenderPermits(2, { reserved: 1, bulkYield: { maxMs: 500, quietMs: 0 } });
      expect(await permits.acquire(LONG)).toBe(true);
      expect(await permits.acquire(LONG)).toBe(true);
      const order: string[] = [];
      const bulk = permits.acquire(LONG, { bulk: true }).then((g) => g && order.push('bulk'));
      await vi.advanceTimersByTimeAsync(500);
      expect(permits.state).toEqual({ held: 2, bulkHeld: 0, waitingInteractive: 0, waitingBulk: 1 });
      const interactive = permits.acquire(LONG).then((g) => g && order.push('interactive'));
      permits.release();
      await interactive;
      // Still one interactive render on a page, but the bulk one has yielded long enough.
      permits.release();
      await bulk;
      expect(order).toEqual(['interactive', 'bulk']);
      expect(permits.state).toEqual({ held: 2, bulkHeld: 1, waitingInteractive: 0, waitingBulk: 0 });
    });

    it('when a bulk render gives up while it yields, then it leaves the line and nothing is handed to it later', async () => {
      const permits = new RenderPermits(2, { reserved: 1, bulkYield: { maxMs: 500, quietMs: 0 } });
      expect(await permits.acquire(LONG)).toBe(true);
      const bulk = permits.acquire(100, { bulk: true });
      await vi.advanceTimersByTimeAsync(100);
      expect(await bulk).toBe(false);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(permits.state).toEqual({ held: 1, bulkHeld: 0, waitingInteractive: 0, waitingBulk: 0 });
    });

    it('when an interactive render has just ended, then bulk renders hold back quietMs for the next one, and take the pages after', async () => {
      const permits = new RenderPermits(3, { reserved: 1, bulkYield: { maxMs: 1_000, quietMs: 100 } });
      expect(await permits.acquire(LONG)).toBe(true);
      let granted = 0;
      for (let i = 0; i < 2; i++) void permits.acquire(LONG, { bulk: true }).then((g) => g && (granted += 1));
      permits.release();
      await vi.advanceTimersByTimeAsync(99);
      expect(granted).toBe(0);
      // The client's next render comes within the quiet time: the bulk renders go on holding back, and the time starts over when it ends.
      expect(await permits.acquire(LONG)).toBe(true);
      await vi.advanceTimersByTimeAsync(50);
      permits.release();
      await vi.advanceTimersByTimeAsync(99);
      expect(granted).toBe(0);
      expect(permits.state).toEqual({ held: 0, bulkHeld: 0, waitingInteractive: 0, waitingBulk: 2 });
      await vi.advanceTimersByTimeAsync(1);
      expect(granted).toBe(2);
      expect(permits.state).toEqual({ held: 2, bulkHeld: 2, waitingInteractive: 0, waitingBulk: 0 });
    });
  });
});
