/** DI token of the prom-client Registry of this process. */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');
/** DI token of the name of the app (label on every metric and log line). */
export const APP_NAME = Symbol('APP_NAME');
/**
 * Period of the event-loop delay histogram behind `nodejs_eventloop_lag_*` (prom-client's default
 * metrics). Its timer wakes the process once per period even when there is nothing to do: at
 * prom-client's 10 ms that is 100 wake-ups a second in every process (an idle relay spent ≈ 6 ms of
 * CPU per second on them, docs/benchmarks.md "Relay at a steady rate"). A stall longer than a period
 * is still measured whole; shorter ones are sampled.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;
