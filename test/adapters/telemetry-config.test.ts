import { describe, expect, it } from 'vitest';
import { activeTelemetry, startTelemetry, tracingRequested } from '@logi/adapters/telemetry';

describe('which OTEL_* variables turn tracing on', () => {
  it.each([
    [{}, false],
    [{ OTEL_SERVICE_NAME: 'logistics-api', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'otlp, none' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: ' ' }, false],
  ] as Array<[Record<string, string>, boolean]>)('when the variables are %j, then tracing is %s', (env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });

  it('when no variable asks for tracing, then starting it gives null and no tracing is active', async () => {
    expect(await startTelemetry({ defaultServiceName: 'logistics-api', env: {} })).toBeNull();
    expect(activeTelemetry()).toBeNull();
  });
});
