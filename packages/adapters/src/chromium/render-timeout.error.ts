/** A render ran out of time and was stopped. */
export class RenderTimeoutError extends Error {
  constructor(limitMs: number) {
    super(`PDF render took longer than ${limitMs} ms and was stopped`);
    this.name = 'RenderTimeoutError';
  }
}
