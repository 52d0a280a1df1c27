// Observability of one process: the health registry, the Prometheus registry, the JSON-line logger,
// OpenTelemetry spans (`Tracing`, W3C trace context, request ids), shutdown on signals, a ring of another process's metric samples (the console's Overview). Imports no other lib.
// Does NOT own: the HTTP endpoints that expose them (/healthz, /readyz, /metrics are @tally/http's),
// any component's checks or metrics (each lib registers its own).
export { ObservabilityModule } from './observability.module';
export { HealthRegistry, overall, statesOnly } from './health.registry';
export type {
  ComponentHealth,
  ComponentStatus,
  HealthCheck,
  OverallStatus,
  ReadinessReport,
} from './health.registry';
export { METRICS_REGISTRY, APP_NAME } from './observability.constants';
export { createLogger } from './logger';
export {
  parseExposition,
  SampleRing,
  type MetricSample,
  type RateSeries,
  type SampledSeries,
} from './metric-samples';
export { stopOnSignals } from './shutdown';
export {
  endWithError,
  sampledTraceparent,
  Tracing,
  type Attributes,
  type Span,
  type TracingOptions,
} from './tracing/tracing';
export { SpanKind } from '@opentelemetry/api';
export { formatTraceparent, parseTraceparent, type TraceParent } from './tracing/trace-context';
export { newRequestId, REQUEST_ID_HEADER, requestIdOf } from './tracing/request-id';
