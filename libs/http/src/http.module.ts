import { type DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { BearerTokens } from './bearer-tokens';
import { HTTP_OPTIONS } from './http.constants';
import { type HttpOptions } from './http.options';
import { ProblemFilter } from './problem.filter';

/**
 * Auth and the error contract, shared by the decision API, the projector's query API and the relay.
 * Authentication itself is a hook of each route, installed by `createHttpApp` (see route-gate.ts):
 * it must run before Fastify reads a body, which a Nest guard cannot.
 */
@Global()
@Module({})
export class HttpModule {
  static forRoot(options: HttpOptions): DynamicModule {
    return {
      module: HttpModule,
      providers: [
        { provide: HTTP_OPTIONS, useValue: options },
        { provide: BearerTokens, useFactory: () => new BearerTokens(options) },
        { provide: APP_FILTER, useClass: ProblemFilter },
      ],
      exports: [HTTP_OPTIONS, BearerTokens],
    };
  }
}
