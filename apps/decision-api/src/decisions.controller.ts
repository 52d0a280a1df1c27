import { Controller, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { DecisionService } from '@tally/engine';
import { Tracing } from '@tally/observability';
import { type FastifyInstance } from 'fastify';
import { registerHotRoutes } from './hot-routes';

/**
 * The hot path: `POST /v1/decisions` and `POST /v1/decisions:batch`.
 *
 * A deliberate deviation from "controllers" (see docs/deviations.md): this controller declares no Nest
 * route; at bootstrap it registers the two routes on the Fastify instance directly (hot-routes.ts).
 * Nest's per-request pipeline — guard, interceptors, pipes, the exception zone — cost ≈ 14 % of the
 * API's throughput in the benchmark, and class-validator ≈ 46 µs a request, against a target of
 * 0.85 of a bare Fastify server doing the same EVALSHA. Everything else stays as it was: DI-wired,
 * the same auth rule in constant time (the route gate checks the token and its decide role before
 * the body; the route, the tenant), the same statuses, headers, bodies and error codes, the same
 * overload shedding and JSON parsing (hooks of the Fastify instance). Control endpoints stay Nest
 * controllers.
 */
@Controller()
export class DecisionsController implements OnModuleInit {
  constructor(
    private readonly decisions: DecisionService,
    private readonly adapterHost: HttpAdapterHost,
    private readonly tracing: Tracing,
  ) {}

  onModuleInit(): void {
    // An application context without an HTTP server (a worker, a test) has no routes to register.
    const adapter = this.adapterHost.httpAdapter as typeof this.adapterHost.httpAdapter | undefined;
    if (!adapter) return;
    registerHotRoutes(adapter.getInstance<FastifyInstance>(), {
      decisions: this.decisions,
      tracing: this.tracing,
    });
  }
}
