/**
 * The delivery rules of the contract: any 2xx succeeds; anything else is
 * tried again after each delay of the schedule in turn, then marked failed;
 * an endpoint with only failures for `disableAfterHours` is disabled.
 */
export function isSuccess(status: number): boolean {
  return status >= 200 && status <= 299;
}

/** When attempt `attempt` (1-based) failed at `now` (seconds): when the next one is due, or null when the schedule is spent. */
export function nextAttemptAfterFailure(attempt: number, now: number, scheduleSeconds: readonly number[]): number | null {
  const delay = scheduleSeconds[attempt - 1];
  return delay === undefined ? null : now + delay;
}

/** Whether an endpoint failing since `failingSince` (seconds; null when its last attempt succeeded) is to be disabled at `now`. */
export function shouldDisable(failingSince: number | null, now: number, disableAfterHours: number): boolean {
  return failingSince !== null && now - failingSince >= disableAfterHours * 3600;
}

export function disabledReason(disableAfterHours: number): string {
  return `Disabled after ${disableAfterHours} hours in which every delivery failed.`;
}
