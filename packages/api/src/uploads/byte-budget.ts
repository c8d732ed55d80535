/**
 * Bytes an API process lets uploads hold in memory at once (ADR 0056): a file written to S3 while it arrives is held
 * whole until its one PUT (up to 10 MiB). 64 MiB is six such files, or two requests of three; a file that finds the
 * budget spent goes to a temp file instead, then one PUT from it (ADR 0046), so memory stays bounded whatever the
 * number of uploads at once. A constant, as the PDF memory cache's 64 MiB default: the heap it guards is the
 * process's, not the operator's to size per deployment.
 */
export const STREAMED_WRITES_BUDGET_BYTES = 64 * 1024 * 1024;

/** A count of bytes reserved against a limit; a reservation that does not fit is refused, never waited for. */
export class ByteBudget {
  private reserved = 0;

  constructor(readonly limit: number) {}

  /** Bytes reserved now. */
  get held(): number {
    return this.reserved;
  }

  /** Reserves `bytes` if they fit; returns the release (safe to call more than once), or null when they do not fit. */
  tryReserve(bytes: number): (() => void) | null {
    if (this.reserved + bytes > this.limit) return null;
    this.reserved += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reserved -= bytes;
    };
  }
}

/** The process's budget for streamed writes: one for every receiver, so concurrent requests share it. */
export const streamedWritesBudget = new ByteBudget(STREAMED_WRITES_BUDGET_BYTES);
