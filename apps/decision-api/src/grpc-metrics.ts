import { Inject, Injectable } from '@nestjs/common';
import { type RlsRefusal } from '@tally/envoy-rls';
import { METRICS_REGISTRY } from '@tally/observability';
import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * Series of the Envoy RLS listener. Decisions it makes are counted by `DecisionMetrics` like the
 * HTTP API's; these say what happened before a decision: refusals at the gate, requests decoded
 * (a refused call is never decoded, which `decoded` lets an operator, and the e2e suite, check).
 */
@Injectable()
export class GrpcMetrics {
  private readonly refusals: Counter<'reason'>;
  private readonly decodedRequests: Counter;
  private inflightOf: () => number = () => 0;

  constructor(@Inject(METRICS_REGISTRY) registry: Registry) {
    const registers = [registry];
    this.refusals = new Counter({
      name: 'tally_grpc_refused_total',
      help: 'gRPC calls ended before their request was read, by reason (unauthenticated|overloaded|read_timeout)',
      labelNames: ['reason'],
      registers,
    });
    this.decodedRequests = new Counter({
      name: 'tally_grpc_requests_decoded_total',
      help: 'gRPC request messages decoded (only calls that passed authentication and the in-flight limit)',
      registers,
    });
    const inflight: Gauge = new Gauge({
      name: 'tally_grpc_inflight',
      help: 'gRPC calls admitted and not yet answered',
      registers,
      collect: () => inflight.set(this.inflightOf()),
    });
  }

  /** The gate whose in-flight count the gauge reports. */
  watchInflight(read: () => number): void {
    this.inflightOf = read;
  }

  refused(reason: RlsRefusal): void {
    this.refusals.inc({ reason });
  }

  decoded(): void {
    this.decodedRequests.inc();
  }
}
