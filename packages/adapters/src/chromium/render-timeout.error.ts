/** A render ran out of time and was stopped, or waited its whole time for a free page. */
export class RenderTimeoutError extends Error {
  constructor(limitMs: number, phase: 'render' | 'queue' = 'render') {
    super(
      phase === 'render'
        ? `PDF render took longer than ${limitMs} ms and was stopped`
        : `PDF render waited longer than ${limitMs} ms for a free page and was given up`,
    );
    this.name = 'RenderTimeoutError';
  }
}
