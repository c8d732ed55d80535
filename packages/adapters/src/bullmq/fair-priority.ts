import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Fair shares of a BullMQ queue between client directories, with the open-source queue's priorities: each job's
 * priority is its start-time fair queueing tag (FairTags in the domain), kept per queue in Redis and moved on by the
 * worker as it starts jobs. Jobs a request waits for take priorities below BULK_BASE, bulk jobs (exports) the range
 * above, so a bulk job starts only when no request's job waits (docs/contribute/decisions/0036-fair-render-scheduling.md).
 */
const BULK_BASE = 2 ** 20;
/** BullMQ's highest priority number (lowest priority). */
const PRIORITY_LIMIT = 2 ** 21 - 1;
/** BullMQ scores a prioritized job `priority * 2^32 + counter`. */
const SCORE_PER_PRIORITY = 2 ** 32;
/** Tags of a queue that nobody used for a day go. */
const TAG_TTL_MS = 24 * 3600 * 1000;
/** Longer than adding a job takes once its tag is known. */
const ASSIGNING_MS = 10_000;
/** Longer than a render job taken ahead waits for a page (PDF_RENDER_TIMEOUT_MS); a dead worker's entries go after it. */
const FETCHED_MS = 120_000;

/** Anything with BullMQ's key naming (Queue and Worker both). */
interface QueueKeys {
  toKey(type: string): string;
}

// KEYS: virtual time, next tag per directory, the queue's prioritized jobs, tags handed out whose job may not be added yet,
// render jobs taken by a worker that wait for a page (ADR 0054).
// ARGV: directory, score range of the kind, TTL, this assignment's token.
// When no job of the kind waits (in Redis or for a page) and none is being added, every directory is even again: the
// tags start over, which keeps them small. (An API process that died between tag and add holds the start-over back for
// ASSIGNING_MS at most, a worker that died with jobs waiting for a page for FETCHED_MS.)
const ASSIGN_TAG = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', nowMs - ${ASSIGNING_MS})
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', nowMs - ${FETCHED_MS})
if redis.call('ZCARD', KEYS[4]) == 0 and redis.call('ZCARD', KEYS[5]) == 0 and redis.call('ZCOUNT', KEYS[3], ARGV[2], ARGV[3]) == 0 then redis.call('DEL', KEYS[1], KEYS[2]) end
local virtual = tonumber(redis.call('GET', KEYS[1]) or '0')
local next = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local slot
if next <= virtual then slot = 2 * virtual else slot = 2 * next + 1 end
redis.call('HSET', KEYS[2], ARGV[1], math.floor(slot / 2) + 1)
redis.call('ZADD', KEYS[4], nowMs, ARGV[5])
for i = 1, 2 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
redis.call('PEXPIRE', KEYS[4], ${ASSIGNING_MS})
return slot
`;

// KEYS: virtual time, jobs waiting for a page. ARGV: the started job's tag, TTL, its id.
const STARTED = `
if tonumber(redis.call('GET', KEYS[1]) or '-1') < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
redis.call('ZREM', KEYS[2], ARGV[3])
return 0
`;

// KEYS: jobs waiting for a page. ARGV: the taken job's id.
const FETCHED = `
local now = redis.call('TIME')
redis.call('ZADD', KEYS[1], tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ${FETCHED_MS})
return 0
`;

function kindOf(bulk: boolean): 'interactive' | 'bulk' {
  return bulk ? 'bulk' : 'interactive';
}

function tagKeys(queue: QueueKeys, bulk: boolean): [string, string, string, string] {
  const kind = kindOf(bulk);
  return [queue.toKey(`fair:${kind}:virtual`), queue.toKey(`fair:${kind}:next`), queue.toKey(`fair:${kind}:assigning`), queue.toKey(`fair:${kind}:fetched`)];
}

export interface FairPlace {
  priority: number;
  /** Call once the job is added (or adding failed). */
  settled(): void;
}

/** The BullMQ priority of a new job of `directory`: its fair tag, in the range of its kind. */
export async function fairPriority(redis: Redis, queue: QueueKeys, directory: string, bulk: boolean): Promise<FairPlace> {
  const base = bulk ? BULK_BASE : 0;
  const ceiling = bulk ? PRIORITY_LIMIT : BULK_BASE - 1;
  // Scores of this kind's waiting jobs: priorities base+1 .. ceiling (exact in a double: below 2^53).
  const low = String((base + 1) * SCORE_PER_PRIORITY);
  const high = `(${String((ceiling + 1) * SCORE_PER_PRIORITY)}`;
  const [virtual, next, assigning, fetched] = tagKeys(queue, bulk);
  const token = randomUUID();
  // The slot (FairTags in the domain): twice the tag, plus one behind the directory's own waiting jobs.
  const slot = (await redis.eval(
    ASSIGN_TAG,
    5,
    virtual,
    next,
    queue.toKey('prioritized'),
    assigning,
    fetched,
    directory,
    low,
    high,
    TAG_TTL_MS,
    token,
  )) as number;
  return {
    // Past half a million jobs of continuous backlog the tags stop growing: the order among the last ones is then first come.
    priority: Math.min(base + 1 + slot, ceiling),
    settled: () => void redis.zrem(assigning, token).catch(() => undefined),
  };
}

/**
 * Where a job of this priority stood in its fair share when it was added: its kind (a request's job or a bulk one) and
 * whether its directory already had jobs of that kind waiting (`backlogged`, the odd slots) or none (`idle`). Null for a
 * job without a priority (added by a release without fair shares).
 */
export function fairClassOf(priority: number | undefined): { kind: 'interactive' | 'bulk'; directoryClass: 'idle' | 'backlogged' } | null {
  if (!priority || priority < 1) return null;
  const bulk = priority > BULK_BASE;
  const slot = priority - 1 - (bulk ? BULK_BASE : 0);
  return { kind: kindOf(bulk), directoryClass: slot % 2 === 1 ? 'backlogged' : 'idle' } as const;
}

/** The `prioritized` scores of the jobs a request waits for (not bulk ones): ZRANGEBYSCORE bounds. */
export const INTERACTIVE_SCORES = { min: String(SCORE_PER_PRIORITY), max: `(${String((BULK_BASE + 1) * SCORE_PER_PRIORITY)}` } as const;

/**
 * A worker took a render job of this priority that may wait for a page (ADR 0054): until it starts (fairStarted), the
 * tags do not start over, so that jobs added meanwhile rank after it as they should, not before it on new tags.
 */
export async function fairFetched(redis: Redis, queue: QueueKeys, priority: number | undefined, jobId: string): Promise<void> {
  if (!priority || priority < 1) return;
  await redis.eval(FETCHED, 1, tagKeys(queue, priority > BULK_BASE)[3], jobId);
}

/** A worker started a job of this priority (`jobId`: fetched before): the queue's virtual time moves on to its tag. */
export async function fairStarted(redis: Redis, queue: QueueKeys, priority: number | undefined, jobId = ''): Promise<void> {
  // A job without a priority was added by a release without fair shares.
  if (!priority || priority < 1) return;
  const bulk = priority > BULK_BASE;
  const tag = Math.floor((priority - 1 - (bulk ? BULK_BASE : 0)) / 2);
  const keys = tagKeys(queue, bulk);
  await redis.eval(STARTED, 2, keys[0], keys[3], tag, TAG_TTL_MS, jobId);
}

/** A bulk job's priority: an export's render, on `pdf-bulk` or (added by a release before ADR 0053) on `pdf`. */
export function isBulkPriority(priority: number | undefined): boolean {
  return priority !== undefined && priority > BULK_BASE;
}
