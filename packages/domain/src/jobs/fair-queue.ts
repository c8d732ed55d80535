/**
 * Start-time fair queueing between client directories (docs/contribute/decisions/0036-fair-render-scheduling.md).
 *
 * Each item gets a tag: the larger of the virtual time (the tag of the last item taken out) and the tag after its
 * directory's previous item. Items leave in tag order, ties in arrival order, except that an item of a directory with
 * nothing waiting goes before the items that share its tag. An item therefore waits behind at most one item of each
 * other directory, however deep their backlogs, and a directory that asks one at a time waits only for a free slot.
 * Bulk items (exports) have tags of their own and leave only when no interactive item waits. The Redis queue applies
 * the same rule in a Lua script; this is the in-process one.
 *
 * Tags are kept as slots, twice the tag, plus one for an item queued behind its directory's own: slot 2t is a
 * directory's first item at tag t, slot 2t + 1 any other.
 */
export class FairTags {
  private virtual = 0;
  private readonly next = new Map<string, number>();

  /** The slot of a new item of `group`. */
  assign(group: string): number {
    const next = this.next.get(group) ?? 0;
    // Nothing of the directory waits (its last tag is behind the virtual time): it goes first at the current tag.
    const idle = next <= this.virtual;
    const tag = idle ? this.virtual : next;
    this.next.set(group, tag + 1);
    return idle ? 2 * tag : 2 * tag + 1;
  }

  /** An item of this slot was taken out (started). */
  started(slot: number): void {
    const tag = Math.floor(slot / 2);
    if (tag > this.virtual) this.virtual = tag;
  }

  /** Nothing waits: every directory is even again, and the table holds no directory it no longer needs. */
  reset(): void {
    this.virtual = 0;
    this.next.clear();
  }
}

interface Entry<T> {
  slot: number;
  seq: number;
  item: T;
}

export class FairQueue<T> {
  private readonly tags = { interactive: new FairTags(), bulk: new FairTags() };
  private readonly waiting = { interactive: [] as Entry<T>[], bulk: [] as Entry<T>[] };
  private seq = 0;

  get size(): number {
    return this.waiting.interactive.length + this.waiting.bulk.length;
  }

  push(group: string, item: T, options: { bulk?: boolean } = {}): void {
    const kind = options.bulk ? 'bulk' : 'interactive';
    const entry = { slot: this.tags[kind].assign(group), seq: this.seq++, item };
    const line = this.waiting[kind];
    // Sorted by (slot, seq); a new entry has the largest seq, so it goes after every entry of its slot.
    let low = 0;
    let high = line.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (line[mid]!.slot <= entry.slot) low = mid + 1;
      else high = mid;
    }
    line.splice(low, 0, entry);
  }

  /** The next item: interactive ones first, each kind in slot order; with `interactiveOnly`, no bulk item. */
  shift(options: { interactiveOnly?: boolean } = {}): T | undefined {
    for (const kind of options.interactiveOnly ? (['interactive'] as const) : (['interactive', 'bulk'] as const)) {
      const entry = this.waiting[kind].shift();
      if (entry) {
        this.tags[kind].started(entry.slot);
        if (this.size === 0) {
          this.tags.interactive.reset();
          this.tags.bulk.reset();
        }
        return entry.item;
      }
    }
    return undefined;
  }

  /** Takes an item out without starting it (its caller gave up); true when it was waiting. */
  remove(item: T): boolean {
    for (const kind of ['interactive', 'bulk'] as const) {
      const at = this.waiting[kind].findIndex((entry) => entry.item === item);
      if (at >= 0) {
        this.waiting[kind].splice(at, 1);
        return true;
      }
    }
    return false;
  }

  /** Every waiting item, emptying the queue. */
  drain(): T[] {
    const items = [...this.waiting.interactive, ...this.waiting.bulk].map((entry) => entry.item);
    this.waiting.interactive = [];
    this.waiting.bulk = [];
    this.tags.interactive.reset();
    this.tags.bulk.reset();
    return items;
  }
}
