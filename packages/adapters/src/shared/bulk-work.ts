import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What the queue that runs a job tells the renderer it reaches through the shared handlers: whether the job is bulk
 * work (an export's render), which keeps pages free for interactive renders (docs/contribute/decisions/0053-worker-pools.md),
 * and its place in the queue's fair order, by which a free page goes to the best waiting render, not the first fetched
 * (docs/contribute/decisions/0054-fetch-ahead-render-ranks.md). Unset means interactive, without a rank.
 */
export interface RenderWork {
  bulk: boolean;
  /** The job's BullMQ priority (its fair tag; comparable within a kind); absent: first come. */
  rank?: number;
  /** Told once, when the render gets its page: the job is then truly started (the queue's fair virtual time moves on). */
  onPage?: () => void;
  /** Filled in by the renderer: how long the job's renders waited for a page (ms), for the stage timing. */
  pageWaitMs: number;
}

/**
 * How long what a process keeps for interactive work while bulk work runs (a Chromium page, the in-process queue's
 * last render slot) stays kept after the last interactive job or render ended: past it, with no client around, an
 * export may use all of them, and the next client's render waits for the first one to come free
 * (docs/contribute/decisions/0059-a-page-kept-while-clients-render.md).
 */
export const INTERACTIVE_RESERVE_HOLD_MS = 10_000;

const renderWork = new AsyncLocalStorage<RenderWork>();

/** Runs `work` with the job's render facts in its async context. */
export function runAsRenderWork<T>(facts: { bulk: boolean; rank?: number; onPage?: () => void }, work: () => T): T {
  return renderWork.run({ ...facts, pageWaitMs: 0 }, work);
}

/** Runs `work` as bulk work when `bulk` is true, as it is otherwise. */
export function runAsBulkWork<T>(bulk: boolean, work: () => T): T {
  return bulk ? runAsRenderWork({ bulk: true }, work) : work();
}

export function isBulkWork(): boolean {
  return renderWork.getStore()?.bulk === true;
}

/** The render facts of the job running now, or undefined outside one. */
export function currentRenderWork(): RenderWork | undefined {
  return renderWork.getStore();
}
