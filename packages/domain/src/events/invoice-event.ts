import type { EventDraft, EventObject } from './event.js';

/**
 * What a committed change to one invoice means to a client, from the list
 * item it last saw (the last one published, null when none) and the item now
 * (null when the invoice is gone):
 * - none before, one now: `invoice.created`;
 * - both, some field different: `invoice.updated` with those fields' values before;
 * - both and equal: nothing (a write that leaves the list item unchanged);
 * - one before, none now: `invoice.deleted` with its id and nr;
 * - an invoice that moved to another directory leaves one and appears in the other.
 */
export function decideInvoiceEvents(before: PublishedItem | null, now: PublishedItem | null): EventDraft[] {
  if (before === null && now === null) return [];
  if (before === null) return [{ directory: now!.directory, type: 'invoice.created', data: { object: now!.item } }];
  if (now === null) return [deleted(before)];
  if (before.directory !== now.directory) return [deleted(before), { directory: now.directory, type: 'invoice.created', data: { object: now.item } }];
  const previous = previousAttributes(before.item, now.item);
  if (Object.keys(previous).length === 0) return [];
  return [{ directory: now.directory, type: 'invoice.updated', data: { object: now.item, previous_attributes: previous } }];
}

/** A list item together with the directory it belongs to. */
export interface PublishedItem {
  directory: string;
  item: EventObject;
}

function deleted(before: PublishedItem): EventDraft {
  return { directory: before.directory, type: 'invoice.deleted', data: { object: { id: before.item.id, nr: before.item.nr } } };
}

/**
 * The fields of `now` whose value differs from `before`, with the value
 * before (a field `before` lacked is null before). Nested values (`orders`,
 * `correct_of`) count as one field and compare by content.
 */
export function previousAttributes(before: EventObject, now: EventObject): EventObject {
  const changed: EventObject = {};
  for (const field of Object.keys(now)) {
    if (!sameValue(before[field], now[field])) changed[field] = before[field] === undefined ? null : before[field];
  }
  return changed;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const list = b as unknown[];
    return a.length === list.length && a.every((value, index) => sameValue(value, list[index]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && sameValue(left[key], right[key]));
}
