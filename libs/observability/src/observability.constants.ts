/** DI token of the prom-client Registry of this process. */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');
/** DI token of the name of the app (label on every metric and log line). */
export const APP_NAME = Symbol('APP_NAME');
