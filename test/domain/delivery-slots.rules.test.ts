import { describe, expect, it } from 'vitest';
import { shareDeliverySlots, type DueEndpoint } from '@logi/domain';

const endpoint = (endpointId: number, directory: string, oldestDue: number, available = 10): DueEndpoint => ({ endpointId, directory, oldestDue, available });
const bounds = (limit: number, endpointSlots: (id: number) => number = () => 4, directorySlots: (directory: string) => number = () => limit) => ({
  limit,
  endpointSlots,
  directorySlots,
});

/** How a claim shares free delivery slots: per endpoint, then round-robin over directories (contract, "Fair sharing between clients"). */
describe('shareDeliverySlots', () => {
  it('when an endpoint has no free slot, then it gets none however old its backlog, and the others get the slots', () => {
    const shares = shareDeliverySlots(
      [endpoint(1, 'a', 0, 100_000), endpoint(2, 'b', 500, 2)],
      bounds(8, (id) => (id === 1 ? 0 : 4)),
    );
    expect([...shares]).toEqual([[2, 2]]);
  });

  it('when one directory has many endpoints, then directories take turns, and its endpoints take turns within its share', () => {
    const due = [endpoint(1, 'a', 0), endpoint(2, 'a', 1), endpoint(3, 'a', 2), endpoint(4, 'a', 3), endpoint(5, 'b', 100)];
    const shares = shareDeliverySlots(due, bounds(6));
    expect(shares.get(5)).toBe(3);
    expect([1, 2, 3, 4].map((id) => shares.get(id) ?? 0)).toEqual([1, 1, 1, 0]);
  });

  it("when a directory's bound is reached, then it gets no more, and the slots go to others or stay free", () => {
    const due = [endpoint(1, 'a', 0), endpoint(2, 'a', 0), endpoint(3, 'b', 50, 1)];
    const shares = shareDeliverySlots(
      due,
      bounds(
        10,
        () => 4,
        (directory) => (directory === 'a' ? 3 : 10),
      ),
    );
    expect((shares.get(1) ?? 0) + (shares.get(2) ?? 0)).toBe(3);
    expect(shares.get(3)).toBe(1);
    expect([...shares.values()].reduce((sum, n) => sum + n, 0)).toBe(4);
  });

  it('when slots are scarce, then a directory with fewer attempts in flight goes first, then the one waiting longest', () => {
    const due = [endpoint(1, 'busy', 0), endpoint(2, 'idle', 100), endpoint(3, 'older', 50)];
    const free = (directory: string) => (directory === 'busy' ? 1 : 8);
    expect([
      ...shareDeliverySlots(
        due,
        bounds(1, () => 4, free),
      ),
    ]).toEqual([[3, 1]]);
    expect(
      [
        ...shareDeliverySlots(
          due,
          bounds(2, () => 4, free),
        ),
      ].sort(),
    ).toEqual([
      [2, 1],
      [3, 1],
    ]);
  });

  it('when fewer attempts are due than slots are free, then each is given, no more', () => {
    expect([...shareDeliverySlots([endpoint(1, 'a', 0, 2), endpoint(2, 'a', 0, 1)], bounds(16))].sort()).toEqual([
      [1, 2],
      [2, 1],
    ]);
    expect(shareDeliverySlots([], bounds(16)).size).toBe(0);
  });
});
