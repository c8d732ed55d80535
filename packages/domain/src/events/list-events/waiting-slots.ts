import { TooManyWaitingRequestsError } from '../events.errors.js';

/**
 * Long polls each client directory holds open in this process, at most `max`
 * at once, so one client's waits never take every connection of the process.
 */
export class WaitingSlots {
  private readonly held = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** Takes a slot of the directory, or throws TooManyWaitingRequestsError; the returned function gives it back (once). */
  take(directory: string): () => void {
    const count = this.held.get(directory) ?? 0;
    if (count >= this.max) throw new TooManyWaitingRequestsError();
    this.held.set(directory, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(directory) ?? 1) - 1;
      if (left > 0) this.held.set(directory, left);
      else this.held.delete(directory);
    };
  }

  /** Slots the directory holds now. */
  heldBy(directory: string): number {
    return this.held.get(directory) ?? 0;
  }
}
