import type { TallyConfig } from './tally.config';

/** The tracing settings of one app (`@tally/observability`'s `TracingOptions`, structurally). */
export interface TracingSettings {
  readonly enabled: boolean;
  readonly sampleRatio: number;
  readonly endpoint: string;
  readonly serviceName: string;
}

/** `OTEL_SERVICE_NAME` when set, else `tally-<app>`: the three apps stay apart in a trace by default. */
export function tracingSettings(
  config: Pick<TallyConfig, 'tracing' | 'traceSampleRatio' | 'otlpEndpoint' | 'otelServiceName'>,
  app: string,
): TracingSettings {
  return {
    enabled: config.tracing === 'on',
    sampleRatio: config.traceSampleRatio,
    endpoint: config.otlpEndpoint,
    serviceName: config.otelServiceName ?? `tally-${app}`,
  };
}
