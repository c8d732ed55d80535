/** An endpoint with due attempts, as one claim sees it. */
export interface DueEndpoint {
  endpointId: number;
  directory: string;
  /** When its oldest due attempt came due (seconds). */
  oldestDue: number;
  /** Due attempts ready to be taken. */
  available: number;
}

export interface DeliverySlotBounds {
  /** Free delivery slots of the claiming process. */
  limit: number;
  /** Free slots of an endpoint (its concurrency less its attempts in flight); 0 or less: none. */
  endpointSlots: (endpointId: number) => number;
  /** Free slots of a client directory (its bound less its attempts in flight); 0 or less: none. */
  directorySlots: (directory: string) => number;
}

/**
 * How many due attempts a claim takes of each endpoint (contract, "Fair sharing between clients"): round-robin over
 * client directories, one slot a directory a round, and within a directory round-robin over its endpoints, so neither
 * an endpoint's backlog nor a directory's many endpoints take every free slot. Directories with fewer attempts in
 * flight go first, then the one whose oldest due attempt waited longest; endpoints within a directory likewise.
 * Returns the endpoints given a slot, with how many.
 */
export function shareDeliverySlots(due: readonly DueEndpoint[], bounds: DeliverySlotBounds): Map<number, number> {
  const byDirectory = new Map<string, DueEndpoint[]>();
  for (const endpoint of due) {
    if (Math.min(endpoint.available, bounds.endpointSlots(endpoint.endpointId)) <= 0) continue;
    const endpoints = byDirectory.get(endpoint.directory) ?? [];
    endpoints.push(endpoint);
    byDirectory.set(endpoint.directory, endpoints);
  }
  const directories = [...byDirectory]
    .map(([directory, endpoints]) => ({
      directory,
      free: bounds.directorySlots(directory),
      oldestDue: Math.min(...endpoints.map((endpoint) => endpoint.oldestDue)),
      next: 0,
      endpoints: endpoints
        .map((endpoint) => ({
          endpoint,
          free: bounds.endpointSlots(endpoint.endpointId),
          room: Math.min(endpoint.available, bounds.endpointSlots(endpoint.endpointId)),
        }))
        .sort((a, b) => b.free - a.free || a.endpoint.oldestDue - b.endpoint.oldestDue || a.endpoint.endpointId - b.endpoint.endpointId),
    }))
    .filter((directory) => directory.free > 0)
    .sort((a, b) => b.free - a.free || a.oldestDue - b.oldestDue || (a.directory < b.directory ? -1 : a.directory > b.directory ? 1 : 0));
  const shares = new Map<number, number>();
  let left = bounds.limit;
  let gave = true;
  while (left > 0 && gave) {
    gave = false;
    for (const directory of directories) {
      if (left === 0) break;
      if (directory.free <= 0) continue;
      const count = directory.endpoints.length;
      for (let step = 0; step < count; step++) {
        const index = (directory.next + step) % count;
        const slot = directory.endpoints[index]!;
        if (slot.room <= 0) continue;
        slot.room--;
        directory.free--;
        directory.next = (index + 1) % count;
        left--;
        shares.set(slot.endpoint.endpointId, (shares.get(slot.endpoint.endpointId) ?? 0) + 1);
        gave = true;
        break;
      }
    }
  }
  return shares;
}
