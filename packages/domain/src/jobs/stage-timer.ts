/**
 * Tells `onStage` the time since the last stage ended (or the timer was made) each time the returned function is
 * called with a stage's name; a no-op without `onStage`. A job's handler makes one per run.
 */
export function stageTimer<S extends string>(onStage: ((stage: S, ms: number) => void) | undefined, now: () => number): (stage: S) => void {
  if (!onStage) return () => undefined;
  let last = now();
  return (stage) => {
    const at = now();
    onStage(stage, Math.max(0, at - last));
    last = at;
  };
}
