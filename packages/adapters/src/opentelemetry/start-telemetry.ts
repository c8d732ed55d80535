import type { Telemetry } from './telemetry.js';

export interface StartTelemetryOptions {
  /** `service.name` when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one. */
  defaultServiceName: string;
  env?: NodeJS.ProcessEnv;
  /** What a traced incoming request's path becomes (`url.path`): a credential in a path (a file link's token) is taken out. */
  redactPath?: (path: string) => string;
}

let active: Telemetry | null = null;

/**
 * Whether the standard variables ask for traces: an OTLP endpoint or a traces
 * exporter, and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none.
 * Empty values count as unset, as for every other variable.
 */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (name: string) => env[name]?.trim() || undefined;
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return false;
  const exporters = (value('OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (exporters.includes('none')) return false;
  return exporters.length > 0 || value('OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined || value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined;
}

/**
 * Starts tracing when the OTEL_* variables ask for it; otherwise loads nothing
 * of OpenTelemetry and resolves to null. A process's entry point awaits it
 * before it imports anything else: the instrumentations patch http, koa, knex,
 * ioredis and pino as they load, and cannot patch what is loaded already.
 */
export async function startTelemetry(options: StartTelemetryOptions): Promise<Telemetry | null> {
  if (active || !tracingRequested(options.env)) return active;
  const { startNodeSdkTelemetry } = await import('./node-sdk.telemetry.js');
  active = await startNodeSdkTelemetry(options.defaultServiceName, options.env ?? process.env, { redactPath: options.redactPath });
  return active;
}

/** The tracing this process started, or null: read by the composition roots. */
export function activeTelemetry(): Telemetry | null {
  return active;
}
