export { ObservabilityModule } from './observability.module';
export { HealthRegistry, overall } from './health.registry';
export type {
  ComponentHealth,
  ComponentStatus,
  HealthCheck,
  OverallStatus,
  ReadinessReport,
} from './health.registry';
export { METRICS_REGISTRY, APP_NAME } from './observability.constants';
export { createLogger } from './logger';
export { stopOnSignals } from './shutdown';
