import type { Telemetry as BullmqTelemetry } from 'bullmq';
import type { PdfRendererPort } from '@logi/domain';

/**
 * OpenTelemetry tracing in a process that runs it: what the composition roots
 * hand the adapters that take part in a trace beyond what the instrumentations see.
 */
export interface Telemetry {
  /** BullMQ's `telemetry` option: the job's add and process spans, the trace carried in the job to the worker. */
  readonly bullmq: BullmqTelemetry;
  /** The renderer with each print as a span of its own. */
  traceRenderer(renderer: PdfRendererPort): PdfRendererPort;
  /** Sends the spans still buffered (bounded) and stops tracing; for the process's shutdown. */
  shutdown(): Promise<void>;
}
