import { type OnApplicationShutdown } from '@nestjs/common';
import {
  ROOT_CONTEXT,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type Link,
  type Span,
  type SpanKind,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { formatTraceparent, parseTraceparent } from './trace-context';

/** What a process's tracing is built from (`TALLY_TRACING`, `TALLY_TRACE_SAMPLE_RATIO`, `OTEL_*`). */
export interface TracingOptions {
  readonly enabled: boolean;
  /** Share of new traces (no caller context) recorded, 0..1. */
  readonly sampleRatio: number;
  /** OTLP/HTTP base URL: spans are posted to `<endpoint>/v1/traces`. */
  readonly endpoint: string;
  /** The spans' `service.name`. */
  readonly serviceName: string;
  /** How long finished spans wait to be exported in one request (the SDK's default: 5 s). */
  readonly exportDelayMs?: number;
}

/**
 * One process's spans: manual spans on an OpenTelemetry tracer (no auto-instrumentation: its hooks
 * would cost on every request of the hot path, traced or not), exported in batches over OTLP/HTTP.
 * Sampling is parent-based: a caller's (or a record's) `traceparent` decides, sampled or not; a
 * span without one is a new trace, recorded at `sampleRatio`. Off (the default), `start` returns
 * undefined before touching anything, so a caller's only cost is that check.
 *
 * The tracer is not registered globally: nothing else in the process (a library's own
 * instrumentation) starts recording because Tally traces.
 */
export class Tracing implements OnApplicationShutdown {
  private constructor(
    private readonly tracer: Tracer | undefined,
    private readonly provider: BasicTracerProvider | undefined,
  ) {}

  /** Tracing off: every `start` is undefined. */
  static off(): Tracing {
    return new Tracing(undefined, undefined);
  }

  static create(options: TracingOptions): Tracing {
    if (!options.enabled) return Tracing.off();
    const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` });
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': options.serviceName }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio) }),
      spanProcessors: [
        new BatchSpanProcessor(exporter, { scheduledDelayMillis: options.exportDelayMs ?? 5000 }),
      ],
    });
    return new Tracing(provider.getTracer('tally'), provider);
  }

  get enabled(): boolean {
    return this.tracer !== undefined;
  }

  /**
   * A span, child of `parent` (a W3C `traceparent`; a malformed one is ignored) or a new trace;
   * undefined when tracing is off. `links`: `traceparent`s of related spans (a batch's records).
   */
  start(
    name: string,
    kind: SpanKind,
    parent: string | undefined,
    links?: readonly string[],
  ): Span | undefined {
    const tracer = this.tracer;
    if (tracer === undefined) return undefined;
    const remote = parent === undefined ? undefined : parseTraceparent(parent);
    const context =
      remote === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, {
            traceId: remote.traceId,
            spanId: remote.spanId,
            traceFlags: remote.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
            isRemote: true,
          });
    return tracer.startSpan(name, { kind, links: links && linksOf(links) }, context);
  }

  /** Exports what is buffered and stops: spans ended after this are dropped. */
  async onApplicationShutdown(): Promise<void> {
    await this.provider?.shutdown();
  }
}

/** The `traceparent` to hand downstream: only for a recorded span, so nothing travels unsampled. */
export function sampledTraceparent(span: Span | undefined): string | undefined {
  if (span === undefined) return undefined;
  const ctx = span.spanContext();
  if ((ctx.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
  return formatTraceparent(ctx.traceId, ctx.spanId, true);
}

/** Ends a span as failed, with the error's message (never a stack: spans leave the process). */
export function endWithError(span: Span, error: unknown): void {
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  span.end();
}

function linksOf(traceparents: readonly string[]): Link[] {
  const links: Link[] = [];
  for (const value of traceparents) {
    const p = parseTraceparent(value);
    if (p === undefined) continue;
    const traceFlags = p.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE;
    links.push({ context: { traceId: p.traceId, spanId: p.spanId, traceFlags, isRemote: true } });
  }
  return links;
}

export type { Attributes, Span };
